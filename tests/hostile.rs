//! Hostile files: what h5vec refuses before it reads or writes a byte of a
//! vector (SPEC.md sections 1 "Names", 6.2, 7 and 8). Every file is built
//! here with the HDF5 API; every case must end in an error naming the path,
//! within a time bound, with nothing outside the file read or changed.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use h5vec::hdf5::{self, File, Group};
use h5vec::{ErrorKind, H5Vector, SaveOptions};

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Rec {
    id: u32,
    label: String,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Row {
    n: i64,
}

fn recs(n: u32) -> Vec<Rec> {
    (0..n)
        .map(|i| Rec {
            id: 100 + i,
            label: format!("row {i}"),
        })
        .collect()
}

/// How long any hostile case may take.
const BOUND: Duration = Duration::from_secs(5);

/// Runs `f` on another thread and fails if it takes longer than [`BOUND`]
/// (a hang fails the test instead of blocking it forever).
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(BOUND) {
        Ok(v) => {
            assert!(
                start.elapsed() < BOUND,
                "{what}: took {:?}",
                start.elapsed()
            );
            v
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the worker sends before it ends"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: no answer within {BOUND:?}"),
    }
}

/// Asserts an h5vec error: its logical path, HDF5 location and a piece of its text.
fn assert_refused<T: std::fmt::Debug>(
    r: h5vec::Result<T>,
    path: &str,
    location: Option<&str>,
    text: &str,
) {
    let e = r.expect_err("expected an error");
    let msg = e.to_string();
    assert_eq!(e.path(), path, "{msg}");
    assert_eq!(e.location(), location, "{msg}");
    assert!(msg.contains(text), "`{text}` not in: {msg}");
}

/// `cmd`, whose child keeps no file descriptor of this process but stdin,
/// stdout and stderr.
///
/// HDF5 opens files without `O_CLOEXEC`: a child would otherwise hold the
/// files other tests have open when it starts, with their `flock` locks,
/// until it ends, and a test reopening its file meanwhile fails with
/// "unable to lock file, errno 11".
fn without_inherited_files(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    extern "C" {
        fn close_range(first: u32, last: u32, flags: i32) -> i32;
    }
    /// Linux's `CLOSE_RANGE_CLOEXEC`: mark the descriptors close-on-exec.
    const CLOSE_RANGE_CLOEXEC: i32 = 4;
    // SAFETY: the closure runs in the child between fork and exec and makes
    // one async-signal-safe system call on the child's own descriptors;
    // stdio (0-2) is already in place and stays open. Failure (an old
    // kernel) leaves the descriptors as they were.
    unsafe {
        cmd.pre_exec(|| {
            close_range(3, u32::MAX, CLOSE_RANGE_CLOEXEC);
            Ok(())
        })
    }
}

struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    fn new() -> Self {
        Dir {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn create(&self, name: &str) -> File {
        File::create(self.path(name)).unwrap()
    }
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every read and write entry point on vector `name` of `Rec`, each of
/// which must be refused with `path`/`location` and `text`.
fn all_entry_points_refuse(file: &Path, name: &'static str, path: &str, loc: &str, text: &str) {
    let file = file.to_owned();
    let (path, loc, text) = (path.to_owned(), loc.to_owned(), text.to_owned());
    bounded(&format!("entry points on {name}"), move || {
        let f = File::open_rw(&file).unwrap();
        let l = Some(loc.as_str());
        assert_refused(h5vec::load_vector::<Rec>(&f, name), &path, l, &text);
        assert_refused(h5vec::load_range::<Rec>(&f, name, 0..1), &path, l, &text);
        assert_refused(h5vec::load_column::<u32>(&f, name, "id"), &path, l, &text);
        assert_refused(h5vec::vector_len(&f, name), &path, l, &text);
        assert_refused(
            h5vec::VectorReader::<Rec>::open(&f, name, 2).map(|_| ()),
            &path,
            l,
            &text,
        );
        assert_refused(h5vec::append_vector(&f, name, &recs(2)), &path, l, &text);
        assert_refused(
            h5vec::VectorWriter::<Rec>::open_append(&f, name, &SaveOptions::default()).map(|_| ()),
            &path,
            l,
            &text,
        );
        assert_refused(h5vec::repair::<Rec>(&f, name), &path, l, &text);
    });
}

/// Replaces dataset `at` of `f` by one built by `make` (in its parent group).
fn replace_dataset(f: &File, at: &str, make: impl FnOnce(&Group, &str)) {
    let (parent, name) = at.rsplit_once('/').unwrap();
    let g = f.group(parent).unwrap();
    g.unlink(name).unwrap();
    make(&g, name);
}

#[test]
fn external_storage_next_to_the_file_is_never_read_or_written() {
    let d = Dir::new();
    let outside = d.path("outside.txt");
    let bytes: Vec<u8> = b"not HDF5: a text file beside the vector, 0123456789abcdef".to_vec();
    std::fs::write(&outside, &bytes).unwrap();
    let f = d.create("f.h5");
    h5vec::save_vector(&f, "v", &recs(3)).unwrap();
    // Contiguous external storage of unlimited size, extendible: the one
    // layout HDF5 lets grow without chunks, into the outside file.
    let ext = std::ffi::CString::new(path_str(&outside)).unwrap();
    replace_dataset(&f, "v/data/id/values", |g, name| {
        // SAFETY: a valid creation property list from `create_u32`; NUL-terminated names.
        create_u32(g, name, |dcpl| unsafe {
            use hdf5_sys::{h5d, h5f, h5p};
            assert!(h5p::H5Pset_layout(dcpl, h5d::H5D_layout_t::H5D_CONTIGUOUS) >= 0);
            assert!(h5p::H5Pset_external(dcpl, ext.as_ptr(), 0, h5f::H5F_UNLIMITED) >= 0);
        });
    });
    f.close().unwrap();
    let bytes = std::fs::read(&outside).unwrap();
    all_entry_points_refuse(
        &d.path("f.h5"),
        "v",
        "$.id",
        "/v/data/id/values",
        "external storage in 1 outside file(s), the first `",
    );
    assert_eq!(std::fs::read(&outside).unwrap(), bytes);
}

#[test]
fn external_storage_on_a_fifo_errors_at_once() {
    let d = Dir::new();
    let fifo = d.path("pipe");
    let ok = without_inherited_files(&mut std::process::Command::new("mkfifo"))
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(ok.success());
    let f = d.create("f.h5");
    h5vec::save_vector(&f, "v", &recs(3)).unwrap();
    replace_dataset(&f, "v/data/label/values", |g, name| {
        g.new_dataset::<u32>()
            .shape(3)
            .external(path_str(&fifo), 0, 12)
            .create(name)
            .unwrap();
    });
    f.close().unwrap();
    all_entry_points_refuse(
        &d.path("f.h5"),
        "v",
        "$.label",
        "/v/data/label/values",
        "pipe`",
    );
}

#[test]
fn external_links_where_a_field_or_values_should_be() {
    let d = Dir::new();
    let other = d.create("other.h5");
    h5vec::save_vector(&other, "w", &recs(5)).unwrap();
    other.close().unwrap();
    let before = std::fs::read(d.path("other.h5")).unwrap();
    let f = d.create("f.h5");
    h5vec::save_vector(&f, "v", &recs(3)).unwrap();
    h5vec::save_vector(&f, "u", &recs(3)).unwrap();
    let other_path = d.path("other.h5");
    let g = f.group("v/data/id").unwrap();
    g.unlink("values").unwrap();
    g.link_external(path_str(&other_path), "/w/data/id/values", "values")
        .unwrap();
    let g = f.group("u/data").unwrap();
    g.unlink("label").unwrap();
    g.link_external(path_str(&other_path), "/w/data/label", "label")
        .unwrap();
    drop(g);
    f.close().unwrap();
    let text = format!(
        "an external link to `{}`:`/w/data/id/values`",
        path_str(&other_path)
    );
    all_entry_points_refuse(&d.path("f.h5"), "v", "$.id", "/v/data/id/values", &text);
    all_entry_points_refuse(
        &d.path("f.h5"),
        "u",
        "$.label",
        "/u/data/label",
        "an external link to `",
    );
    assert_eq!(std::fs::read(d.path("other.h5")).unwrap(), before);
}

#[test]
fn virtual_datasets_with_and_without_their_source() {
    let d = Dir::new();
    let src_path = d.path("src.h5");
    let src = d.create("src.h5");
    src.new_dataset_builder()
        .with_data(&[7u32, 8, 9])
        .create("src")
        .unwrap();
    src.close().unwrap();
    let f = d.create("f.h5");
    h5vec::save_vector(&f, "v", &recs(3)).unwrap();
    replace_dataset(&f, "v/data/id/values", |g, name| {
        g.new_dataset::<u32>()
            .shape(3)
            .virtual_map(path_str(&src_path), "src", 3, .., 3, ..)
            .create(name)
            .unwrap();
    });
    f.close().unwrap();
    let text = format!(
        "a virtual dataset (its values come from `{}`:`src`)",
        path_str(&src_path)
    );
    all_entry_points_refuse(&d.path("f.h5"), "v", "$.id", "/v/data/id/values", &text);
    std::fs::remove_file(&src_path).unwrap();
    all_entry_points_refuse(&d.path("f.h5"), "v", "$.id", "/v/data/id/values", &text);
}

#[test]
fn soft_links_inside_a_vector() {
    let d = Dir::new();
    let f = d.create("f.h5");
    h5vec::save_vector(&f, "v", &recs(3)).unwrap();
    h5vec::save_vector(&f, "w", &recs(3)).unwrap();
    h5vec::save_vector(&f, "x", &recs(3)).unwrap();
    // v's ids are w's: a soft link to another vector's column.
    let g = f.group("v/data/id").unwrap();
    g.unlink("values").unwrap();
    g.link_soft("/w/data/id/values", "values").unwrap();
    // A dangling soft link where a field should be.
    let g = f.group("x/data").unwrap();
    g.unlink("label").unwrap();
    g.link_soft("/nowhere/label", "label").unwrap();
    drop(g);
    f.close().unwrap();
    all_entry_points_refuse(
        &d.path("f.h5"),
        "v",
        "$.id",
        "/v/data/id/values",
        "found a soft link to `/w/data/id/values`",
    );
    all_entry_points_refuse(
        &d.path("f.h5"),
        "x",
        "$.label",
        "/x/data/label",
        "found a soft link to `/nowhere/label`",
    );
}

/// The vector group itself may be reached through a link the caller chose;
/// when that link leads nowhere, the error says what the link is.
#[test]
fn links_to_the_vector_itself() {
    let d = Dir::new();
    let f = d.create("f.h5");
    h5vec::save_vector(&f, "v", &recs(3)).unwrap();
    f.link_soft("/v", "alias").unwrap();
    f.link_soft("/nowhere", "ghost").unwrap();
    f.link_external("missing.h5", "/v", "far").unwrap();
    let f2 = d.create("g.h5");
    h5vec::save_vector(&f2, "v", &recs(4)).unwrap();
    f2.close().unwrap();
    f.link_external(path_str(&d.path("g.h5")), "/v", "there")
        .unwrap();
    assert_eq!(h5vec::load_vector::<Rec>(&f, "alias").unwrap(), recs(3));
    assert_eq!(h5vec::load_vector::<Rec>(&f, "there").unwrap(), recs(4));
    let e = h5vec::load_vector::<Rec>(&f, "ghost").unwrap_err();
    assert_eq!(e.path(), "$");
    assert!(
        e.to_string()
            .contains("found a soft link to `/nowhere`, which leads nowhere (a dangling link)"),
        "{e}"
    );
    let e = h5vec::vector_len(&f, "far").unwrap_err();
    assert!(
        e.to_string()
            .contains("found an external link to `missing.h5`:`/v`"),
        "{e}"
    );
    // A dataset where the vector should be.
    f.new_dataset_builder()
        .with_data(&[1.0f64])
        .create("plain")
        .unwrap();
    let e = h5vec::load_vector::<Rec>(&f, "plain").unwrap_err();
    assert!(
        e.to_string()
            .ends_with("expected `/plain` to be a group, found a dataset"),
        "{e}"
    );
}

/// Writes the scalar string dataset `name` into `g`.
fn put_str(g: &Group, name: &str, value: &str) {
    let v: hdf5::types::VarLenUnicode = value.parse().unwrap();
    g.new_dataset::<hdf5::types::VarLenUnicode>()
        .shape(())
        .create(name)
        .unwrap()
        .write_scalar(&v)
        .unwrap();
}

#[test]
fn schema_tree_shared_through_hard_links_errors_fast() {
    let d = Dir::new();
    let f = d.create("f.h5");
    h5vec::save_vector(&f, "v", &recs(3)).unwrap();
    let meta = f.group("v/metadata").unwrap();
    meta.unlink("schema").unwrap();
    // 30 levels, each node's two children one shared group: 2^30 paths.
    let mut node = meta.create_group("schema").unwrap();
    for _ in 0..30 {
        put_str(&node, "kind", "record");
        put_str(&node, "schema", "HDF5Vectors.RecordSchema");
        put_str(&node, "codec", "HDF5Vectors.StructCodec");
        let ch = node.create_group("children").unwrap();
        let next = ch.create_group("1").unwrap();
        ch.link_hard("1", "2").unwrap();
        node = next;
    }
    put_str(&node, "kind", "scalar");
    put_str(&node, "schema", "HDF5Vectors.ScalarSchema");
    put_str(&node, "codec", "HDF5Vectors.IdentityCodec");
    drop((node, meta));
    f.close().unwrap();
    all_entry_points_refuse(
        &d.path("f.h5"),
        "v",
        "$",
        "/v/metadata/schema/children/1",
        "found a group with 2 hard links",
    );
}

/// A group below the vector that links back to the vector: a cycle.
#[test]
fn cycle_back_to_the_vector_group() {
    let d = Dir::new();
    let f = d.create("f.h5");
    h5vec::save_vector(&f, "v", &recs(3)).unwrap();
    f.group("v/data/id")
        .unwrap()
        .link_hard("/v", "loop")
        .unwrap();
    f.close().unwrap();
    let f = File::open(d.path("f.h5")).unwrap();
    let e = bounded("cycle", move || {
        h5vec::load_vector::<Rec>(&f, "v").unwrap_err()
    });
    assert_eq!(e.path(), "$.id.loop");
    assert_eq!(e.location(), Some("/v/data/id/loop"));
    assert!(
        e.to_string()
            .contains("found the object already reached as `/v`"),
        "{e}"
    );
}

/// What is at `name` of `f`, as bytes through HDF5 (to prove it unchanged).
fn snapshot(f: &File, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(g: &Group, out: &mut Vec<String>) {
        for n in g.member_names().unwrap() {
            if let Ok(ds) = g.dataset(&n) {
                let v = match (ds.read_raw::<f64>(), ds.read_raw::<i64>()) {
                    (Ok(v), _) => format!("{v:?}"),
                    (_, Ok(v)) => format!("{v:?}"),
                    _ => format!("{:?}", ds.read_raw::<u8>().unwrap_or_default()),
                };
                out.push(format!("{}/{n}: {:?} {v}", g.name(), ds.shape()));
            } else if let Ok(sub) = g.group(&n) {
                out.push(format!("{}/{n}/", g.name()));
                walk(&sub, out);
            }
        }
    }
    if let Ok(ds) = f.dataset(name) {
        out.push(format!("{:?}", ds.read_raw::<f64>().unwrap()));
    } else {
        walk(&f.group(name).unwrap(), &mut out);
    }
    out
}

#[test]
fn replace_replaces_only_vectors() {
    let d = Dir::new();
    let f = d.create("f.h5");
    f.new_dataset_builder()
        .with_data(&[1.0f64, 2.0, 3.0])
        .create("plain")
        .unwrap();
    let g = f.create_group("user").unwrap();
    g.new_dataset_builder()
        .with_data(&[1.0f64, 2.0])
        .create("x")
        .unwrap();
    let m = g.create_group("metadata").unwrap();
    m.new_dataset_builder()
        .with_data(&[5.0f64])
        .create("count")
        .unwrap();
    h5vec::h5col::save_table(&f, "table", &[Row { n: 1 }, Row { n: 2 }]).unwrap();
    h5vec::vls::save_strings(&f, "strings", &[Some("a".into()), None]).unwrap();
    h5vec::save_vector(&f, "v", &recs(2)).unwrap();
    let replace = SaveOptions::default().replace(true);
    for (name, found) in [
        ("plain", "found a dataset"),
        ("user", "found a group that is not an h5vec vector"),
        ("table", "found an h5col table"),
        ("strings", "found a VLS string array"),
    ] {
        let before = snapshot(&f, name);
        let e = h5vec::save_vector_with(&f, name, &recs(4), &replace).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Mismatch { .. }), "{e}");
        assert_eq!(e.path(), "$");
        assert_eq!(e.location(), Some(format!("/{name}").as_str()));
        let msg = e.to_string();
        assert!(msg.contains(found), "{msg}");
        assert!(msg.contains("nothing was changed"), "{msg}");
        let e = h5vec::VectorWriter::<Rec>::create(&f, name, &replace)
            .map(|_| ())
            .unwrap_err();
        assert!(e.to_string().contains(found), "{e}");
        assert_eq!(snapshot(&f, name), before, "{name} changed");
    }
    // A vector is replaced.
    h5vec::save_vector_with(&f, "v", &recs(4), &replace).unwrap();
    assert_eq!(h5vec::load_vector::<Rec>(&f, "v").unwrap(), recs(4));
    let mut w = h5vec::VectorWriter::<Rec>::create(&f, "v", &replace).unwrap();
    w.extend(&recs(1)).unwrap();
    w.finish().unwrap();
    assert_eq!(h5vec::load_vector::<Rec>(&f, "v").unwrap(), recs(1));
    assert_eq!(
        h5vec::h5col::load_table::<Row>(&f, "table").unwrap(),
        [Row { n: 1 }, Row { n: 2 }]
    );
}

#[test]
fn repair_removes_nothing_by_name() {
    let d = Dir::new();
    let f = d.create("f.h5");
    h5vec::save_vector(&f, "v", &recs(3)).unwrap();
    // Objects under the reserved names (SPEC.md section 1, Names) made by
    // another tool: a complete vector, a group of user data, a vector
    // without count, a soft link. `repair` trims `v` and touches none.
    h5vec::save_vector(&f, "user", &recs(5)).unwrap();
    f.relink("user", ".v.h5vec-partial").unwrap();
    let g = f.create_group(".v.h5vec-partial-1").unwrap();
    g.new_dataset_builder()
        .with_data(&[1u8, 2])
        .create("data")
        .unwrap();
    g.create_group("metadata").unwrap();
    h5vec::save_vector(&f, "torn", &recs(2)).unwrap();
    f.group("torn/metadata").unwrap().unlink("count").unwrap();
    f.relink("torn", ".v.h5vec-partial-2").unwrap();
    f.link_soft("/v", ".v.h5vec-partial-3").unwrap();
    let names = [
        ".v.h5vec-partial",
        ".v.h5vec-partial-1",
        ".v.h5vec-partial-2",
    ];
    // (Sorted: HDF5 may list the members of a group in another order.)
    let sorted = |n: &&str| {
        let mut v = snapshot(&f, n);
        v.sort();
        v
    };
    let before: Vec<_> = names.iter().map(sorted).collect();
    h5vec::repair::<Rec>(&f, "v").unwrap();
    let after: Vec<_> = names.iter().map(sorted).collect();
    assert_eq!(after, before);
    assert!(f.link_exists(".v.h5vec-partial-3"));
    assert_eq!(
        h5vec::load_vector::<Rec>(&f, ".v.h5vec-partial").unwrap(),
        recs(5)
    );
    assert_eq!(h5vec::load_vector::<Rec>(&f, "v").unwrap(), recs(3));
}

#[test]
fn reserved_names_are_rejected_on_save() {
    let f = Dir::new().create("f.h5");
    for name in [
        ".v.h5vec-partial",
        ".v.h5vec-partial-7",
        ".h5vec-partial",
        "..h5vec-partial-12",
    ] {
        let check = |r: h5vec::Result<()>| {
            let e = r.unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::BadName(_)), "{e}");
            assert_eq!(e.path(), "$");
            assert_eq!(e.location(), Some(format!("/{name}").as_str()));
            assert!(e.to_string().contains("are reserved"), "{e}");
        };
        check(h5vec::save_vector(&f, name, &recs(1)));
        check(h5vec::VectorWriter::<Rec>::create(&f, name, &SaveOptions::default()).map(|_| ()));
        check(h5vec::h5col::save_table(&f, name, &[Row { n: 1 }]));
        check(h5vec::vls::save_strings(&f, name, &[None]));
        assert!(!f.link_exists(name));
    }
    // Names that only resemble them are fine.
    for name in [
        "v.h5vec-partial",
        ".v.h5vec-partial-",
        ".v.h5vec-partial-1x",
    ] {
        h5vec::save_vector(&f, name, &recs(1)).unwrap();
    }
    // Other name errors say what the container is.
    let e = h5vec::h5col::save_table(&f, "a/b", &[Row { n: 1 }]).unwrap_err();
    assert_eq!((e.path(), e.location()), ("$", Some("/a/b")));
    assert!(e.to_string().contains("the table name contains `/`"), "{e}");
    let e = h5vec::vls::save_strings(&f, "", &[None]).unwrap_err();
    assert_eq!((e.path(), e.location()), ("$", Some("/")));
    assert!(e.to_string().contains("the VLS array name is empty"), "{e}");
}

#[test]
fn tables_and_vls_arrays_are_walked_too() {
    let d = Dir::new();
    let f = d.create("f.h5");
    h5vec::h5col::save_table(&f, "t", &[Row { n: 1 }, Row { n: 2 }]).unwrap();
    h5vec::vls::save_strings(&f, "s", &[Some("a".into()), None]).unwrap();
    h5vec::save_vector(&f, "w", &[5i64, 6]).unwrap();
    let t = f.group("t").unwrap();
    t.unlink("n").unwrap();
    t.link_soft("/w/data/values", "n").unwrap();
    let s = f.group("s").unwrap();
    s.link_external("elsewhere.h5", "/x", "names").unwrap();
    let e = h5vec::h5col::load_table::<Row>(&f, "t").unwrap_err();
    assert_eq!((e.path(), e.location()), ("$.n", Some("/t/n")));
    assert!(
        e.to_string().contains("soft link to `/w/data/values`"),
        "{e}"
    );
    let e = h5vec::h5col::append_table(&f, "t", &[Row { n: 3 }]).unwrap_err();
    assert_eq!((e.path(), e.location()), ("$.n", Some("/t/n")));
    let e = h5vec::vls::load_strings(&s).unwrap_err();
    assert_eq!((e.path(), e.location()), ("$", Some("/s/names")));
    assert!(
        e.to_string()
            .contains("an external link to `elsewhere.h5`:`/x`"),
        "{e}"
    );
}

/// Appends need datasets that can grow; an h5py-style contiguous column
/// is named, not "dataset has contiguous storage".
#[test]
fn appends_to_fixed_size_datasets_say_so() {
    let d = Dir::new();
    let f = d.create("f.h5");
    h5vec::save_vector(&f, "v", &recs(3)).unwrap();
    replace_dataset(&f, "v/data/id/values", |g, name| {
        g.new_dataset_builder()
            .with_data(&[100u32, 101, 102])
            .create(name)
            .unwrap();
    });
    assert_eq!(h5vec::load_vector::<Rec>(&f, "v").unwrap(), recs(3));
    let e = h5vec::append_vector(&f, "v", &recs(1)).unwrap_err();
    assert_eq!(e.path(), "$.id");
    assert_eq!(e.location(), Some("/v/data/id/values"));
    assert!(
        e.to_string().ends_with(
            "expected a chunked dataset with an unlimited first dimension (appends grow it), \
             found contiguous storage, which cannot grow (h5py writes it without chunks and \
             maxshape=(None, ...))"
        ),
        "{e}"
    );
    assert_eq!(h5vec::load_vector::<Rec>(&f, "v").unwrap(), recs(3));
}

/// A dataset whose chunks need filter 32015 (Zstandard), which this build
/// does not have: written with direct chunk writes, as a file from
/// elsewhere would hold it.
fn write_unknown_filter_file(path: &Path) {
    let f = File::create(path).unwrap();
    h5vec::save_vector(&f, "v", &recs(3)).unwrap();
    replace_dataset(&f, "v/data/id/values", |g, name| {
        use hdf5_sys::{h5d, h5p, h5z};
        // SAFETY: a valid creation property list from `create_u32`; `[3u64]` is the rank-1 chunk shape.
        let ds = create_u32(g, name, |dcpl| unsafe {
            assert!(h5p::H5Pset_chunk(dcpl, 1, [3u64].as_ptr()) >= 0);
            assert!(
                h5p::H5Pset_filter(dcpl, 32015, h5z::H5Z_FLAG_OPTIONAL, 0, std::ptr::null()) >= 0
            );
        });
        let chunk = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
        // SAFETY: a valid dataset and a buffer of the chunk's size.
        let r = hdf5::sync::sync(|| unsafe {
            h5d::H5Dwrite_chunk(
                ds.id(),
                h5p::H5P_DEFAULT,
                0,
                [0u64].as_ptr(),
                chunk.len(),
                chunk.as_ptr().cast(),
            )
        });
        assert!(r >= 0);
    });
    f.close().unwrap();
}

/// Creates a 1-D uint32 dataset of 3 rows (first dimension unlimited) with
/// creation properties set by `setup`, through the C API (hdf5-metno's
/// builder chunks every extendible dataset).
fn create_u32(g: &Group, name: &str, setup: impl FnOnce(hdf5_sys::h5i::hid_t)) -> hdf5::Dataset {
    use hdf5_sys::{h5d, h5p, h5s, h5t};
    let cname = std::ffi::CString::new(name).unwrap();
    // SAFETY: valid ids; each created id is closed or owned by the result.
    hdf5::sync::sync(|| unsafe {
        let dcpl = h5p::H5Pcreate(*h5p::H5P_CLS_DATASET_CREATE);
        setup(dcpl);
        let space = h5s::H5Screate_simple(1, [3u64].as_ptr(), [h5s::H5S_UNLIMITED].as_ptr());
        let ds = h5d::H5Dcreate2(
            g.id(),
            cname.as_ptr(),
            *h5t::H5T_STD_U32LE,
            space,
            h5p::H5P_DEFAULT,
            dcpl,
            h5p::H5P_DEFAULT,
        );
        h5s::H5Sclose(space);
        h5p::H5Pclose(dcpl);
        assert!(ds >= 0, "creating {name}");
        hdf5::from_id::<hdf5::Dataset>(ds).unwrap()
    })
}

/// Builds a shared library that writes `$H5VEC_PLUGIN_MARKER` when loaded.
fn fake_plugin(dir: &Path) {
    let src = dir.join("fake.c");
    std::fs::write(
        &src,
        r#"#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void mark(void) {
    const char *p = getenv("H5VEC_PLUGIN_MARKER");
    if (p) { FILE *f = fopen(p, "w"); if (f) { fputs("loaded\n", f); fclose(f); } }
}
int H5PLget_plugin_type(void) { return 0; }
const void *H5PLget_plugin_info(void) { return 0; }
"#,
    )
    .unwrap();
    let plugins = dir.join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let ok = without_inherited_files(&mut std::process::Command::new("cc"))
        .args(["-shared", "-fPIC", "-o"])
        .arg(plugins.join("libh5vec_fake_filter.so"))
        .arg(&src)
        .status()
        .expect("cc (a C compiler) is needed to build the fake plugin");
    assert!(ok.success());
}

/// Runs [`plugin_child`] in a new process (HDF5 reads HDF5_PLUGIN_PATH when
/// it starts) with the plugin directory and the file.
#[test]
fn unknown_filters_never_load_plugins() {
    let d = Dir::new();
    fake_plugin(d.dir.path());
    write_unknown_filter_file(&d.path("f.h5"));
    let out = without_inherited_files(&mut std::process::Command::new(
        std::env::current_exe().unwrap(),
    ))
    .args([
        "plugin_child",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("HDF5_PLUGIN_PATH", d.path("plugins"))
    .env("H5VEC_PLUGIN_MARKER", d.path("marker"))
    .env("H5VEC_PLUGIN_FILE", d.path("f.h5"))
    .output()
    .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(text.contains("1 passed"), "{text}");
    assert!(text.contains("plugin child: done"), "{text}");
}

/// The child of [`unknown_filters_never_load_plugins`]: h5vec refuses the
/// filter and nothing from the plugin directory is loaded; then HDF5's own
/// availability check loads the fake plugin (proof that the setup works).
#[test]
#[ignore = "run by unknown_filters_never_load_plugins in its own process"]
fn plugin_child() {
    let file = std::env::var_os("H5VEC_PLUGIN_FILE").expect("run by the parent test");
    let marker = PathBuf::from(std::env::var_os("H5VEC_PLUGIN_MARKER").unwrap());
    let plugins = std::env::var("HDF5_PLUGIN_PATH").unwrap();
    let f = File::open_rw(&file).unwrap();
    let start = Instant::now();
    let expect = "found filter `` (id 32015) (Zstandard; in Python: `import hdf5plugin`; \
                  h5vec writes Zstandard inside Blosc, 32001), which is not available";
    for r in [
        h5vec::load_vector::<Rec>(&f, "v").map(drop),
        h5vec::load_column::<u32>(&f, "v", "id").map(drop),
        h5vec::vector_len(&f, "v").map(drop),
        h5vec::append_vector(&f, "v", &recs(1)),
    ] {
        assert_refused(r, "$.id", Some("/v/data/id/values"), expect);
    }
    assert!(start.elapsed() < BOUND);
    assert!(!marker.exists(), "h5vec made HDF5 load a plugin");
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert!(!maps.contains(&plugins), "mapped from the plugin directory");
    // HDF5's own check looks in the plugin directory.
    // SAFETY: a query of HDF5's filter registry, under the lock.
    let avail = hdf5::sync::sync(|| unsafe { hdf5_sys::h5z::H5Zfilter_avail(32015) });
    assert!(avail <= 0);
    assert!(
        marker.exists(),
        "the fake plugin was not loadable: the test proves nothing"
    );
    println!("plugin child: done");
}

/// How long the walk of a typical 20-field vector takes: `vector_len` is
/// the walk plus one scalar read. Run with `--ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a check"]
fn guard_cost() {
    #[derive(H5Vector, Clone)]
    struct Twenty {
        a0: f64,
        a1: f64,
        a2: i32,
        a3: i64,
        a4: u8,
        a5: String,
        a6: [f32; 3],
        a7: bool,
        a8: Vec<u32>,
        a9: Option<f64>,
        b0: f64,
        b1: f64,
        b2: i32,
        b3: i64,
        b4: u16,
        b5: String,
        b6: [f64; 2],
        b7: char,
        b8: Vec<String>,
        b9: Option<i32>,
    }
    let d = Dir::new();
    let f = d.create("f.h5");
    let rows: Vec<Twenty> = (0..1000)
        .map(|i| Twenty {
            a0: i as f64,
            a1: 1.0,
            a2: i,
            a3: 3,
            a4: 4,
            a5: format!("s{i}"),
            a6: [1.0; 3],
            a7: true,
            a8: vec![1, 2],
            a9: Some(1.0),
            b0: 0.0,
            b1: 1.0,
            b2: 2,
            b3: 3,
            b4: 4,
            b5: "x".into(),
            b6: [0.0; 2],
            b7: 'c',
            b8: vec!["a".into()],
            b9: None,
        })
        .collect();
    h5vec::save_vector(&f, "v", &rows).unwrap();
    let n = 200;
    let time = |what: &str, f: &mut dyn FnMut()| {
        f();
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        let per = t.elapsed() / n;
        println!("{what}: {per:?} per call");
    };
    time("vector_len (walk + count)", &mut || {
        h5vec::vector_len(&f, "v").unwrap();
    });
    time("count read alone", &mut || {
        f.dataset("v/metadata/count")
            .unwrap()
            .read_scalar::<i64>()
            .unwrap();
    });
    time("load_range 0..1", &mut || {
        h5vec::load_range::<Twenty>(&f, "v", 0..1).unwrap();
    });
}
