//! A record with many fields: saving, loading and appending it stays within
//! a test thread's default stack in a debug build (the per-field encoder and
//! decoder lists are built without the stack growing with the square of the
//! field count).

use h5vec::H5Vector;

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Wide {
    f0: i64,
    f1: String,
    f2: Vec<u16>,
    f3: Option<f64>,
    f4: i64,
    f5: String,
    f6: Vec<u16>,
    f7: Option<f64>,
    f8: i64,
    f9: String,
    f10: Vec<u16>,
    f11: Option<f64>,
    f12: i64,
    f13: String,
    f14: Vec<u16>,
    f15: Option<f64>,
    f16: i64,
    f17: String,
    f18: Vec<u16>,
    f19: Option<f64>,
    f20: i64,
    f21: String,
    f22: Vec<u16>,
    f23: Option<f64>,
    f24: i64,
    f25: String,
    f26: Vec<u16>,
    f27: Option<f64>,
    f28: i64,
    f29: String,
    f30: Vec<u16>,
    f31: Option<f64>,
    f32: i64,
    f33: String,
    f34: Vec<u16>,
    f35: Option<f64>,
    f36: i64,
    f37: String,
    f38: Vec<u16>,
    f39: Option<f64>,
    f40: i64,
    f41: String,
    f42: Vec<u16>,
    f43: Option<f64>,
    f44: i64,
    f45: String,
    f46: Vec<u16>,
    f47: Option<f64>,
    f48: i64,
    f49: String,
    f50: Vec<u16>,
    f51: Option<f64>,
    f52: i64,
    f53: String,
    f54: Vec<u16>,
    f55: Option<f64>,
    f56: i64,
    f57: String,
    f58: Vec<u16>,
    f59: Option<f64>,
    f60: i64,
    f61: String,
    f62: Vec<u16>,
    f63: Option<f64>,
    f64: i64,
    f65: String,
    f66: Vec<u16>,
    f67: Option<f64>,
    f68: i64,
    f69: String,
    f70: Vec<u16>,
    f71: Option<f64>,
    f72: i64,
    f73: String,
    f74: Vec<u16>,
    f75: Option<f64>,
    f76: i64,
    f77: String,
    f78: Vec<u16>,
    f79: Option<f64>,
}

fn row(r: i64) -> Wide {
    Wide {
        f0: -7 - r,
        f1: format!("{}-1", r),
        f2: vec![2; (r % 3) as usize],
        f3: if r % 2 == 0 {
            Some(r as f64 / 4.0)
        } else {
            None
        },
        f4: r * 4 - 7,
        f5: format!("{}-5", r),
        f6: vec![6; (r % 3) as usize],
        f7: if r % 2 == 0 {
            Some(r as f64 / 8.0)
        } else {
            None
        },
        f8: r * 8 - 7,
        f9: format!("{}-9", r),
        f10: vec![10; (r % 3) as usize],
        f11: if r % 2 == 0 {
            Some(r as f64 / 12.0)
        } else {
            None
        },
        f12: r * 12 - 7,
        f13: format!("{}-13", r),
        f14: vec![14; (r % 3) as usize],
        f15: if r % 2 == 0 {
            Some(r as f64 / 16.0)
        } else {
            None
        },
        f16: r * 16 - 7,
        f17: format!("{}-17", r),
        f18: vec![18; (r % 3) as usize],
        f19: if r % 2 == 0 {
            Some(r as f64 / 20.0)
        } else {
            None
        },
        f20: r * 20 - 7,
        f21: format!("{}-21", r),
        f22: vec![22; (r % 3) as usize],
        f23: if r % 2 == 0 {
            Some(r as f64 / 24.0)
        } else {
            None
        },
        f24: r * 24 - 7,
        f25: format!("{}-25", r),
        f26: vec![26; (r % 3) as usize],
        f27: if r % 2 == 0 {
            Some(r as f64 / 28.0)
        } else {
            None
        },
        f28: r * 28 - 7,
        f29: format!("{}-29", r),
        f30: vec![30; (r % 3) as usize],
        f31: if r % 2 == 0 {
            Some(r as f64 / 32.0)
        } else {
            None
        },
        f32: r * 32 - 7,
        f33: format!("{}-33", r),
        f34: vec![34; (r % 3) as usize],
        f35: if r % 2 == 0 {
            Some(r as f64 / 36.0)
        } else {
            None
        },
        f36: r * 36 - 7,
        f37: format!("{}-37", r),
        f38: vec![38; (r % 3) as usize],
        f39: if r % 2 == 0 {
            Some(r as f64 / 40.0)
        } else {
            None
        },
        f40: r * 40 - 7,
        f41: format!("{}-41", r),
        f42: vec![42; (r % 3) as usize],
        f43: if r % 2 == 0 {
            Some(r as f64 / 44.0)
        } else {
            None
        },
        f44: r * 44 - 7,
        f45: format!("{}-45", r),
        f46: vec![46; (r % 3) as usize],
        f47: if r % 2 == 0 {
            Some(r as f64 / 48.0)
        } else {
            None
        },
        f48: r * 48 - 7,
        f49: format!("{}-49", r),
        f50: vec![50; (r % 3) as usize],
        f51: if r % 2 == 0 {
            Some(r as f64 / 52.0)
        } else {
            None
        },
        f52: r * 52 - 7,
        f53: format!("{}-53", r),
        f54: vec![54; (r % 3) as usize],
        f55: if r % 2 == 0 {
            Some(r as f64 / 56.0)
        } else {
            None
        },
        f56: r * 56 - 7,
        f57: format!("{}-57", r),
        f58: vec![58; (r % 3) as usize],
        f59: if r % 2 == 0 {
            Some(r as f64 / 60.0)
        } else {
            None
        },
        f60: r * 60 - 7,
        f61: format!("{}-61", r),
        f62: vec![62; (r % 3) as usize],
        f63: if r % 2 == 0 {
            Some(r as f64 / 64.0)
        } else {
            None
        },
        f64: r * 64 - 7,
        f65: format!("{}-65", r),
        f66: vec![66; (r % 3) as usize],
        f67: if r % 2 == 0 {
            Some(r as f64 / 68.0)
        } else {
            None
        },
        f68: r * 68 - 7,
        f69: format!("{}-69", r),
        f70: vec![70; (r % 3) as usize],
        f71: if r % 2 == 0 {
            Some(r as f64 / 72.0)
        } else {
            None
        },
        f72: r * 72 - 7,
        f73: format!("{}-73", r),
        f74: vec![74; (r % 3) as usize],
        f75: if r % 2 == 0 {
            Some(r as f64 / 76.0)
        } else {
            None
        },
        f76: r * 76 - 7,
        f77: format!("{}-77", r),
        f78: vec![78; (r % 3) as usize],
        f79: if r % 2 == 0 {
            Some(r as f64 / 80.0)
        } else {
            None
        },
    }
}

#[test]
fn eighty_fields_round_trip_on_a_small_stack() {
    // 512 KiB: a quarter of a test thread's default stack.
    let t = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(|| {
            let dir = tempfile::tempdir().unwrap();
            let file = h5vec::create_file(dir.path().join("wide.h5")).unwrap();
            let rows: Vec<Wide> = (0..50).map(row).collect();
            h5vec::save_vector(&file, "wide", &rows).unwrap();
            h5vec::append_vector(&file, "wide", &rows[..3]).unwrap();
            let back: Vec<Wide> = h5vec::load_vector(&file, "wide").unwrap();
            assert_eq!(back.len(), 53);
            assert_eq!(&back[..50], &rows[..]);
            assert_eq!(&back[50..], &rows[..3]);
            let mid: Vec<Wide> = h5vec::load_range(&file, "wide", 10..12).unwrap();
            assert_eq!(mid, rows[10..12]);
        })
        .unwrap();
    t.join().unwrap();
}
