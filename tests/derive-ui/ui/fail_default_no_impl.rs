use h5vec::H5Vector;

struct NoDefault;

#[derive(H5Vector)]
struct Level(u8);

#[derive(H5Vector)]
struct Order {
    id: u32,
    #[h5vec(default)]
    level: Level,
}

fn not_a_u8() -> String {
    String::new()
}

#[derive(H5Vector)]
struct Order2 {
    #[h5vec(default = "not_a_u8")]
    id: u8,
    #[h5vec(default = "missing_fn")]
    other: u8,
}

fn main() {
    let _ = NoDefault;
}
