//! h5col tables: the columns say what they are. The schema node of each
//! column (and of its list elements) is inferred from its datasets and
//! groups, then read as a vector's node is; a categorical column (integer
//! codes with a `CATEGORIES` reference) is read as a dictionary of its
//! labels.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, StringArray};
use arrow_buffer::{BooleanBuffer, NullBuffer};

use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};
use hdf5::Group;

use crate::arrow::mapping::{field_of, number_type};
use crate::error::{Error, Place, Result};
use crate::guard::{self, Access};
use crate::kinds::list::{
    FillDecoder, FillNumber, LIST_COLUMN as LIST_COLUMN_CLASS, RECORD_VALUES, STRING_VALUES,
};
use crate::kinds::nullable::MASK;
use crate::raw;
use crate::schema::{ids, Kind, Schema, Stored};

use super::container::{Keep, Source};
use crate::kinds::record::arrow::read::Record;
use crate::kinds::scalar::arrow::read::{Bools, FixedStrs, Prim};

use super::nodes::{arrow_err, both, length, validity, with_prim, BoxNode, Levels, Node};
use super::open::open_node;
use super::select::{select_columns, Pick};

pub(super) fn open_table(parent: &Group, name: &str, select: Option<&[Pick]>) -> Result<Source> {
    let (table, walked, nrows) = crate::h5col::open_checked(parent, name, Access::Read)?;
    let tp = crate::h5col::table_place(&table);
    let order = match crate::h5col::read_column_order(&table, &tp)? {
        Some(o) => o,
        None => crate::h5col::column_members(&table, &tp)?,
    };
    let order = match select {
        Some(picks) => select_columns(&order, picks)?,
        None => order,
    };
    let mut fields = Vec::with_capacity(order.len());
    let mut children = Vec::with_capacity(order.len());
    for col in &order {
        let (f, n) = open_table_column(&table, col, nrows)?;
        fields.push(Arc::new(f));
        children.push(n);
    }
    let fields = Fields::from(fields);
    Ok(Source {
        schema: Arc::new(ArrowSchema::new(fields.clone())),
        record_root: true,
        root: Box::new(Record {
            fields,
            children,
            at: tp,
        }),
        rows: nrows,
        no_data: false,
        _keep: Keep::Walk(walked),
    })
}

/// What table columns and list elements can be, for errors.
const TABLE_COLUMN: &str = "an h5col column (numbers, categorical codes, h5col bool, \
     fixed-length strings, list groups)";

fn open_table_column(table: &Group, name: &str, nrows: u64) -> Result<(Field, BoxNode)> {
    let path = crate::h5col::column_path(name);
    let at = Place::new(&path, crate::codec::member_path(table, name));
    if let Ok(g) = table.group(name) {
        let node = infer_list(&g, &path, 1)?;
        let field = field_of(name, &Schema::from(&node), false, &path)?;
        let n = open_node(&g, &node, &path, nrows, &field)?;
        return Ok((field, n));
    }
    let ds = table
        .dataset(name)
        .map_err(|_| Error::mismatch(&at, TABLE_COLUMN, guard::describe_member(table, name)))?;
    let info = raw::type_info(&ds, &at)?;
    use hdf5_sys::h5t::H5T_class_t::*;
    match info.class {
        H5T_ENUM if info.size == 1 => {
            let col = crate::h5col::open_bool_col(table, name, nrows)?;
            let field = Field::new(name, DataType::Boolean, false);
            Ok((
                field,
                Box::new(Bools {
                    col,
                    levels: Levels::default(),
                }),
            ))
        }
        H5T_STRING if !info.vlen_str => {
            let rdr = crate::h5col::open_fixed_str(table, name, nrows)?;
            let field = Field::new(name, DataType::LargeUtf8, rdr.has_fill());
            Ok((field, Box::new(FixedStrs { rdr, at })))
        }
        H5T_INTEGER if crate::h5col::is_categorical(table, name)? => {
            let cat = crate::h5col::Categorical::open(table, name, nrows)?;
            let labels: ArrayRef = Arc::new(StringArray::from_iter_values(cat.labels()));
            let ty = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
            let field = Field::new(name, ty, cat.has_fill());
            Ok((field, Box::new(Categories { cat, labels })))
        }
        H5T_INTEGER | H5T_FLOAT => {
            let ty = number_of(&info)
                .and_then(number_type)
                .ok_or_else(|| Error::mismatch(&at, TABLE_COLUMN, info.describe()))?;
            fn num<T: arrow_array::types::ArrowPrimitiveType>(
                table: &Group,
                name: &str,
                path: &str,
                nrows: u64,
            ) -> Result<(Prim<T>, bool)>
            where
                T::Native: FillNumber,
            {
                let (col, fill) =
                    FillDecoder::<T::Native>::open(table, name, path, nrows)?.into_parts();
                let nullable = fill.is_some();
                Ok((
                    Prim {
                        col,
                        fill,
                        levels: Levels::default(),
                        lent: None,
                    },
                    nullable,
                ))
            }
            with_prim!(&ty, T => {
                let (p, nullable) = num::<T>(table, name, &path, nrows)?;
                Ok((Field::new(name, ty.clone(), nullable), Box::new(p) as BoxNode))
            }, _ => Err(Error::mismatch(&at, TABLE_COLUMN, info.describe())))
        }
        _ => Err(Error::mismatch(&at, TABLE_COLUMN, info.describe())),
    }
}

/// A categorical column as `Dictionary(Int32, Utf8)`: the keys are the
/// codes (checked: a code that is neither the fill value nor a label's
/// position is an error naming the row), the values the labels, the
/// missing code null.
struct Categories {
    cat: crate::h5col::Categorical,
    labels: ArrayRef,
}

impl Node for Categories {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let at = self.cat.place().clone();
        let n = length(&rows, &at)?;
        let codes = self.cat.read_codes(rows)?;
        let own = validity(BooleanBuffer::collect_bool(codes.len(), |i| {
            codes[i].is_some()
        }));
        let nulls = both(nulls, own, n, &at)?;
        let keys = Int32Array::new(
            codes.iter().map(|c| c.map_or(0, |k| k as i32)).collect(),
            nulls,
        );
        let dict = DictionaryArray::<Int32Type>::try_new(keys, self.labels.clone())
            .map_err(arrow_err(&at))?;
        Ok(Arc::new(dict))
    }
}

/// The encoded type of a number dataset type, if it is one.
fn number_of(info: &raw::TypeInfo) -> Option<&'static str> {
    use hdf5_sys::h5t::H5T_class_t::*;
    Some(match (info.class, info.size, info.signed) {
        (H5T_INTEGER, 1, true) => "Int8",
        (H5T_INTEGER, 2, true) => "Int16",
        (H5T_INTEGER, 4, true) => "Int32",
        (H5T_INTEGER, 8, true) => "Int64",
        (H5T_INTEGER, 1, false) => "UInt8",
        (H5T_INTEGER, 2, false) => "UInt16",
        (H5T_INTEGER, 4, false) => "UInt32",
        (H5T_INTEGER, 8, false) => "UInt64",
        (H5T_FLOAT, 4, _) => "Float32",
        (H5T_FLOAT, 8, _) => "Float64",
        _ => return None,
    })
}

/// A node as h5vec writes it for the same layout (no logical type).
fn stored(
    kind: Kind,
    schema: &str,
    codec: &str,
    encoded: Option<&str>,
    children: Vec<Stored>,
) -> Stored {
    Stored {
        kind,
        schema: schema.into(),
        codec: codec.into(),
        encoded_type: encoded.map(str::to_owned),
        children,
        ..Stored::default()
    }
}

/// Wraps `node` in a `nullable` node when `group` has a MASK.
fn masked(group: &Group, node: Stored) -> Stored {
    if group.link_exists(MASK) {
        stored(
            Kind::Nullable,
            ids::NULLABLE,
            ids::MASK_CODEC,
            None,
            vec![node],
        )
    } else {
        node
    }
}

/// The node of list group `g` (a table's list column, or a nested list),
/// from its members: the list, `nullable` around it with a MASK; `depth`
/// list levels deep (at most [`crate::limits::MAX_TABLE_LIST_DEPTH`]).
fn infer_list(g: &Group, path: &str, depth: usize) -> Result<Stored> {
    let at = Place::new(path, g.name());
    if depth > crate::limits::MAX_TABLE_LIST_DEPTH {
        return Err(Error::invalid(
            &at,
            format!(
                "list columns nested more than {} deep",
                crate::limits::MAX_TABLE_LIST_DEPTH
            ),
        ));
    }
    let class = raw::attr_string(g, "CLASS", &at)?;
    if class.as_deref() != Some(LIST_COLUMN_CLASS) {
        return Err(Error::mismatch(
            &at,
            "a list column group (CLASS = \"LIST_COLUMN\")",
            class.map_or("no CLASS attribute".into(), |c| format!("CLASS = {c:?}")),
        ));
    }
    let item = infer_item(g, "VALUES", &format!("{path}[]"), depth)?;
    let list = stored(Kind::List, ids::LIST, ids::H5VEC_CODEC, None, vec![item]);
    Ok(masked(g, list))
}

/// The node of the `VALUES` member of list group `parent`.
/// `depth`: the list levels around it.
fn infer_item(parent: &Group, name: &str, path: &str, depth: usize) -> Result<Stored> {
    let at = Place::new(path, crate::codec::member_path(parent, name));
    if !parent.link_exists(name) {
        return Err(Error::mismatch(&at, "a list's VALUES", "nothing"));
    }
    if let Ok(g) = parent.group(name) {
        let class = raw::attr_string(&g, "CLASS", &at)?;
        return match class.as_deref() {
            Some(STRING_VALUES) => Ok(masked(
                &g,
                stored(
                    Kind::StringValues,
                    ids::STRING_VALUES,
                    ids::H5VEC_CODEC,
                    Some("String"),
                    vec![],
                ),
            )),
            Some(LIST_COLUMN_CLASS) => infer_list(&g, path, depth + 1),
            Some(RECORD_VALUES) => Err(Error::mismatch(
                &at,
                "list elements a table describes by itself",
                "RECORD_VALUES (h5vec's record elements have no schema in an h5col table; \
                 load the table with its Rust type)",
            )),
            other => Err(Error::mismatch(
                &at,
                "CLASS STRING_VALUES or LIST_COLUMN",
                format!("{other:?}"),
            )),
        };
    }
    let ds = parent
        .dataset(name)
        .map_err(|_| Error::mismatch(&at, TABLE_COLUMN, guard::describe_member(parent, name)))?;
    let info = raw::type_info(&ds, &at)?;
    let shape = raw::shape(&ds, &at)?;
    let enc = if raw::is_h5col_bool(&ds, &at)? {
        "Bool"
    } else {
        number_of(&info).ok_or_else(|| Error::mismatch(&at, TABLE_COLUMN, info.describe()))?
    };
    if shape.len() > 1 {
        let mut node = stored(Kind::Dense, ids::DENSE, ids::IDENTITY, Some(enc), vec![]);
        let dims = shape[1..]
            .iter()
            .rev()
            .map(|&d| i64::try_from(d).map_err(|_| Error::invalid(&at, "dimension out of range")))
            .collect::<Result<Vec<_>>>()?;
        node.dimensions = Some(dims);
        return Ok(node);
    }
    let dt = raw::dataset_type(&ds, &at)?;
    let filled = enc != "Bool" && raw::user_fill(&ds, dt.id(), info.size, &at)?.is_some();
    Ok(if filled {
        stored(
            Kind::FillNullable,
            ids::FILL_SCHEMA,
            ids::FILL_CODEC,
            Some(enc),
            vec![],
        )
    } else {
        stored(Kind::Scalar, ids::SCALAR, ids::IDENTITY, Some(enc), vec![])
    })
}
