use h5vec::H5Vector;

#[derive(H5Vector)]
struct Order {
    id: u32,
    // An alias may not be another field's stored name ...
    #[h5vec(alias = "id")]
    key: u32,
    // ... nor the field's own ...
    #[h5vec(alias = "price")]
    price: f64,
    // ... nor another field's alias, nor given twice.
    #[h5vec(alias = "old", alias = "old")]
    a: i32,
    #[h5vec(alias = "old")]
    b: i32,
    // A skipped field always takes `Default::default()`.
    #[h5vec(skip, default)]
    cache: Vec<u8>,
    #[h5vec(default, default)]
    twice: u8,
    #[h5vec(default = 5)]
    not_a_path: u8,
    #[h5vec(alias)]
    no_name: u8,
    #[h5vec(alias = "a/b")]
    bad_name: u8,
}

fn main() {}
