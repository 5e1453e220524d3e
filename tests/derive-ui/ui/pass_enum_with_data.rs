use h5vec::H5Vector;

// Enums with data: unit, tuple and struct variants, generics, field
// attributes on variant fields, `rename` on variants.
#[derive(H5Vector)]
#[repr(u8)]
#[allow(dead_code)]
enum Shape<T> {
    Point,
    Circle(T),
    #[h5vec(rename = "rect")]
    Rect {
        #[h5vec(rename = "width", deflate = 4)]
        w: f64,
        #[h5vec(json)]
        tags: Vec<String>,
        #[h5vec(skip)]
        cache: u32,
    },
    Phantom(std::marker::PhantomData<T>),
}

fn main() {
    let _: Vec<Shape<f32>> = vec![Shape::Point, Shape::Circle(1.0)];
}
