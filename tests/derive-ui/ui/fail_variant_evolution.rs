use h5vec::H5Vector;

// The fields of an enum variant are read exactly as stored (SPEC.md
// section 12): `alias` and `default` on them are refused, not ignored.
#[derive(H5Vector)]
enum Event {
    Idle,
    Fill {
        #[h5vec(alias = "quantity")]
        qty: i32,
        #[h5vec(default)]
        fee: f64,
    },
    Note(#[h5vec(default = "empty")] String),
}

fn empty() -> String {
    String::new()
}

fn main() {}
