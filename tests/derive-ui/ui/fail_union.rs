use h5vec::H5Vector;

#[derive(H5Vector)]
union Bits {
    i: i32,
    f: f32,
}

fn main() {}
