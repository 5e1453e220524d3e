#![deny(warnings)]
#![allow(dead_code)] // the shadowing types below exist only to be in scope

// User types with the names of prelude and std items the generated code
// must not pick up by accident.
struct Result;
struct Option;
struct Some;
struct None;
struct Vec;
struct String;
struct Default;
struct Box;
struct Sized;
struct T;
mod std {}
mod core {}
mod serde {}
#[allow(non_camel_case_types)] // shadows the primitive on purpose
struct u8;
#[allow(non_upper_case_globals)] // names the generated code's locals might use
const parts: () = ();
#[allow(non_upper_case_globals)] // as above
const raw: () = ();

#[derive(::h5vec::H5Vector)]
struct Record {
    a: f64,
    #[h5vec(skip)]
    b: ::std::vec::Vec<f64>,
    #[h5vec(json)]
    c: ::std::option::Option<i32>,
    #[h5vec(blob)]
    d: ::std::string::String,
    #[h5vec(vls)]
    e: ::std::string::String,
    #[h5vec(zstd = 3, chunk_length = 16)]
    f: f64,
    #[h5vec(blosc(compressor = "lz4hc", level = 9, shuffle = "bit"))]
    g: ::std::vec::Vec<u16>,
    #[h5vec(no_compression)]
    h: i8,
    #[h5vec(lzf)]
    i: i8,
    #[h5vec(deflate = 1)]
    j: i8,
}

#[derive(::h5vec::H5Vector)]
struct Tuple(i32, ::std::string::String);

#[derive(::h5vec::H5Vector)]
struct Unit;

#[derive(::h5vec::H5Vector, ::std::clone::Clone, ::std::marker::Copy)]
#[repr(u8)]
enum Flag {
    Off,
    On,
}

fn assert_h5vector<T: ::h5vec::H5Vector>() {}

fn main() {
    assert_h5vector::<Record>();
    assert_h5vector::<Tuple>();
    assert_h5vector::<Unit>();
    assert_h5vector::<Flag>();
    let _ = (Flag::Off, Flag::On);
}
