use h5vec::H5Vector;

// An enum with data is stored by variant position (SPEC.md section 4.4):
// explicit discriminants, variant attributes other than `rename`, two
// variants under one stored name, and a variant stored beside the union's
// own TAG and INDEX datasets are refused.
#[derive(H5Vector)]
#[repr(u8)]
enum Shape {
    Point = 1,
    Circle(f64) = 2,
    #[h5vec(rename = "Point")]
    Rect { w: f64, h: f64 },
    #[h5vec(deflate = 4)]
    Line(f32),
    TAG(u8),
}

fn main() {}
