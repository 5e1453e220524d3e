//! The union kind's untyped side (feature `arrow`, SPEC.md section 11):
//! `read`, a union column (and a fieldless enum's labels) as an Arrow
//! dense union (dictionary); `write`, the reverse. Both are generic over
//! the dispatcher of the other kinds (`read` is given `open_node`, `write`
//! is generic over the `ChildCol` the dispatcher implements), so this folder
//! names no other kind.

pub(crate) mod read;
pub(crate) mod write;
