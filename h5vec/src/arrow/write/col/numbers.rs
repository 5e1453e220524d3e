//! The writers of `Option<number>` list elements (`Fill`).

use crate::arrow::numbers::numbers;
use crate::error::{Error, Result};
use crate::kinds::list::{FillEncoder, FillItem, FillNumber, ItemCodec};

numbers! {
    /// A `fill_nullable` element writer of one of the number types.
    pub(crate) enum Fill {
        numbers(FillEncoder<native>),
    }
}

pub(super) trait MakeFill {
    fn make<T: FillNumber>(&self) -> Result<FillEncoder<T>>
    where
        FillItem<T>: ItemCodec<Encoder = FillEncoder<T>>;
}

impl Fill {
    pub(super) fn make(enc: Option<&str>, m: &impl MakeFill, path: &str) -> Result<Fill> {
        Ok(numbers!(by_name (enc.unwrap_or("")) {
            Fill::number(m.make()?),
            e => {
                return Err(Error::mismatch(
                    path,
                    "a fill_nullable node of a number type",
                    format!("encoded type `{e}`"),
                ))
            }
        }))
    }
}
