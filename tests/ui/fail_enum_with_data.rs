use h5vec::H5Vector;

#[derive(H5Vector)]
#[repr(u8)]
enum Shape {
    Point,
    Circle(f64),
    Rect { w: f64, h: f64 },
}

fn main() {}
