//! Evolution attributes: defaults (trait and function, generic fields),
//! aliases, together with rename and storage settings.
use h5vec::H5Vector;

fn start<T: From<u8>>() -> T {
    T::from(1)
}

#[derive(H5Vector, Debug, PartialEq)]
struct Order<T: H5Vector + Default + 'static> {
    #[h5vec(alias = "ident", alias = "key")]
    id: u32,
    #[h5vec(default, rename = "c", deflate = 4)]
    coupon: Option<String>,
    #[h5vec(default)]
    value: T,
    #[h5vec(default = "start")]
    count: u64,
    #[h5vec(default = "std::string::String::new", alias = "note")]
    comment: String,
    #[h5vec(skip)]
    cache: Vec<u8>,
}

#[derive(H5Vector, Debug, PartialEq)]
struct Pair(#[h5vec(default)] u8, #[h5vec(alias = "3")] i64);

fn main() {
    let dir = std::env::temp_dir().join(format!("h5vec-pass-evolution-{}.h5", std::process::id()));
    let file = h5vec::create_file(&dir).unwrap();
    #[derive(H5Vector)]
    struct Old {
        key: u32,
    }
    h5vec::save_vector(&file, "v", &[Old { key: 4 }]).unwrap();
    let back: Vec<Order<f32>> = h5vec::load_vector(&file, "v").unwrap();
    assert_eq!(
        back,
        [Order { id: 4, coupon: None, value: 0.0, count: 1, comment: String::new(), cache: vec![] }]
    );
    h5vec::save_vector(&file, "p", &[(7i64,)]).unwrap();
    let _ = h5vec::load_vector::<Pair>(&file, "p").unwrap_err();
    drop(file);
    let _ = std::fs::remove_file(&dir);
}
