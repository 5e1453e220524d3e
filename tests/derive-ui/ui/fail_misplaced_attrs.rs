use h5vec::H5Vector;

// `#[h5vec(...)]` on enum variants means nothing and is rejected.
#[derive(H5Vector)]
#[repr(u8)]
enum Mode {
    #[h5vec(rename = "off")]
    Off,
    On,
}

// Borrowed data cannot be loaded back.
#[derive(H5Vector)]
struct View<'a> {
    name: &'a str,
}

fn main() {}
