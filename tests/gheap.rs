//! Global heap collections checked before HDF5 reads variable-length
//! strings (SPEC.md section 7, h5vec/src/gheap.rs): a damaged collection
//! (a free-space object of size 0, on which HDF5 loops forever) behind
//! uncompressed and compressed chunks, deflate after a shuffle that HDF5
//! skipped included, is an error, not a hang. Each load runs in a child
//! process with a time limit, so a hang fails the test instead of blocking
//! it (a hung HDF5 call holds the library lock for the whole process).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use h5vec::hdf5::File;
use h5vec::{Compression, H5Vector, SaveOptions};

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Rec {
    name: String,
}

/// Environment variable naming the file the child loads.
const CHILD_INPUT: &str = "H5VEC_GHEAP_TEST_INPUT";

/// How long a child's load may take.
const LIMIT: Duration = Duration::from_secs(20);

const ROWS: usize = 20_000;

fn rows() -> Vec<Rec> {
    (0..ROWS)
        .map(|i| Rec {
            name: format!("s{i}"),
        })
        .collect()
}

/// Runs in the child: loads the input and prints the outcome.
#[test]
#[ignore = "run by the other tests in a child process"]
fn child_loads_one_file() {
    let Ok(input) = std::env::var(CHILD_INPUT) else {
        return;
    };
    let f = h5vec::open_file(&input).unwrap();
    match h5vec::load_vector::<Rec>(&f, "v") {
        Ok(v) => println!("LOADED {} rows, equal: {}", v.len(), v == rows()),
        Err(e) => println!("ERROR {e}"),
    }
}

/// Loads `path` in a child process; its output, or `None` on a hang.
fn load_in_child(path: &Path) -> Option<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_loads_one_file",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_INPUT, path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            let mut s = String::from_utf8_lossy(&out.stdout).into_owned();
            s.push_str(&String::from_utf8_lossy(&out.stderr));
            return Some(s);
        }
        if t.elapsed() > LIMIT {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Makes the first object of every full collection of the column's strings
/// (thousands of objects and no free space; the metadata's strings are in
/// a later one, which has some) free space of size 0. Returns the
/// collections' addresses.
fn damage(path: &Path) -> Vec<usize> {
    let mut data = std::fs::read(path).unwrap();
    let le = |b: &[u8]| {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w) as usize
    };
    let (mut at, mut found) = (0, Vec::new());
    while let Some(i) = data[at..].windows(4).position(|w| w == b"GCOL") {
        at += i;
        let size = le(&data[at + 8..at + 16]);
        let (mut p, mut objects) = (16, 0);
        while p + 16 <= size {
            if le(&data[at + p..at + p + 2]) == 0 {
                break;
            }
            objects += 1;
            p += 16 + ((le(&data[at + p + 8..at + p + 16]) + 7) & !7);
        }
        if p + 16 > size && objects >= 1000 {
            data[at + 16..at + 18].fill(0);
            data[at + 24..at + 32].fill(0);
            found.push(at);
        }
        at += 4;
    }
    assert!(
        !found.is_empty(),
        "no full collection of the column's strings"
    );
    std::fs::write(path, &data).unwrap();
    found
}

/// Replaces the column's dataset with one holding the same strings as
/// h5py 3 (HDF5 2.0) writes them with `shuffle=True, compression="gzip"`:
/// the pipeline lists shuffle (optional) then deflate, and every chunk's
/// filter mask says the shuffle was skipped (the chunks hold deflated heap
/// IDs). The chunks are made by HDF5 in a deflate-only dataset and copied.
fn rewrite_as_h5py(f: &File) {
    use h5vec::hdf5::types::VarLenUnicode;
    use hdf5_sys::{h5d, h5i, h5p, h5s};
    let old = f.dataset("v/data/name/values").unwrap();
    let ty = old.dtype().unwrap();
    let values: Vec<VarLenUnicode> = old.read_raw().unwrap();
    drop(old);
    f.unlink("v/data/name/values").unwrap();
    let make = |name: &std::ffi::CStr, shuffle: bool| {
        h5vec::hdf5::sync::sync(|| {
            // SAFETY: every id made here is closed here;
            // the arrays outlive the calls that read them.
            unsafe {
                let dcpl = h5p::H5Pcreate(*h5p::H5P_CLS_DATASET_CREATE);
                let (dims, chunk) = ([ROWS as u64], [4096u64]);
                let space = h5s::H5Screate_simple(1, dims.as_ptr(), std::ptr::null());
                let ok = h5p::H5Pset_chunk(dcpl, 1, chunk.as_ptr()) >= 0
                    && (!shuffle || h5p::H5Pset_shuffle(dcpl) >= 0)
                    && h5p::H5Pset_deflate(dcpl, 6) >= 0;
                let ds = if ok {
                    h5d::H5Dcreate2(
                        f.id(),
                        name.as_ptr(),
                        ty.id(),
                        space,
                        h5p::H5P_DEFAULT,
                        dcpl,
                        h5p::H5P_DEFAULT,
                    )
                } else {
                    h5i::H5I_INVALID_HID
                };
                h5s::H5Sclose(space);
                h5p::H5Pclose(dcpl);
                assert!(ds >= 0, "{name:?} made");
                h5d::H5Dclose(ds);
            }
        })
    };
    make(c"v/data/name/plain", false);
    let plain_ds = f.dataset("v/data/name/plain").unwrap();
    plain_ds.write_raw(&values).unwrap();
    make(c"v/data/name/values", true);
    let to_ds = f.dataset("v/data/name/values").unwrap();
    let (plain, to) = (plain_ds.id(), to_ds.id());
    let sizes: Vec<u64> = (0..ROWS.div_ceil(4096))
        .map(|k| plain_ds.chunk_info(k).unwrap().size)
        .collect();
    let copied = h5vec::hdf5::sync::sync(|| {
        let mut copied = 0;
        for (k, &size) in sizes.iter().enumerate() {
            let off = [k as u64 * 4096];
            // SAFETY: `buf` has the chunk's stored size; both datasets are
            // open; `off` names a chunk both have.
            unsafe {
                let mut buf = vec![0u8; size as usize];
                let mut mask = 0u32;
                let mut len = buf.len();
                if h5d::H5Dread_chunk2(
                    plain,
                    h5p::H5P_DEFAULT,
                    off.as_ptr(),
                    &mut mask,
                    buf.as_mut_ptr().cast(),
                    &mut len,
                ) < 0
                    || len != buf.len()
                    || h5d::H5Dwrite_chunk(
                        to,
                        h5p::H5P_DEFAULT,
                        mask << 1 | 1,
                        off.as_ptr(),
                        buf.len(),
                        buf.as_ptr().cast(),
                    ) < 0
                {
                    break;
                }
            }
            copied += 1;
        }
        copied
    });
    assert_eq!(copied, ROWS.div_ceil(4096), "chunks copied");
    drop((plain_ds, to_ds));
    f.unlink("v/data/name/plain").unwrap();
}

/// Saves the strings with `comp` (rewritten as h5py writes them when
/// `h5py`), checks the chunks' filter masks are `mask`, damages a
/// collection and asserts the load is the heap error.
fn damaged_collection_is_an_error(comp: Compression, h5py: bool, mask: u32) {
    damaged_collection_in_file_is_an_error(comp, h5py, mask, 0)
}

/// [`damaged_collection_is_an_error`] in a file that starts with a user
/// block of `userblock` bytes (heap addresses are relative to its end).
fn damaged_collection_in_file_is_an_error(
    comp: Compression,
    h5py: bool,
    mask: u32,
    userblock: u64,
) {
    // One test at a time: a child inherits the descriptors (and HDF5's
    // file locks) of files another test has open while it starts.
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.h5");
    {
        let f = File::with_options()
            .with_fcpl(|p| p.userblock(userblock))
            .create(&path)
            .unwrap();
        let opts = SaveOptions::default()
            .compression(comp.clone())
            .vls_strings(false)
            .chunk_length(4096);
        h5vec::save_vector_with(&f, "v", &rows(), &opts).unwrap();
        if h5py {
            rewrite_as_h5py(&f);
        }
        let ds = f.dataset("v/data/name/values").unwrap();
        let n = ds.num_chunks().unwrap();
        assert_eq!(n, ROWS.div_ceil(4096));
        for i in 0..n {
            assert_eq!(ds.chunk_info(i).unwrap().filter_mask, mask, "chunk {i}");
        }
    }
    let intact = load_in_child(&path).expect("the intact file loads");
    assert!(
        intact.contains("LOADED 20000 rows, equal: true"),
        "{intact}"
    );
    let at = damage(&path);
    let Some(out) = load_in_child(&path) else {
        panic!("{comp:?}: the load hung (HDF5's global heap loop)");
    };
    // The check walks the collections the rows name in address order.
    let want = |at: usize| {
        format!(
            "ERROR $.name: invalid data: damaged global heap collection at byte {at} of the \
             file: the object at byte {} is free space of size 0 (HDF5 would loop on it forever)",
            at + 16
        )
    };
    assert!(
        at.iter().any(|&a| out.contains(&want(a))),
        "{comp:?}: {out}"
    );
}

#[test]
fn a_damaged_collection_behind_uncompressed_chunks_is_an_error() {
    damaged_collection_is_an_error(Compression::None, false, 0);
}

#[test]
fn a_damaged_collection_behind_deflate_chunks_is_an_error() {
    let comp = Compression::Deflate {
        level: 6,
        shuffle: false,
    };
    damaged_collection_is_an_error(comp, false, 0);
}

/// h5vec's own shuffle on variable-length strings runs (mask 0).
#[test]
fn a_damaged_collection_behind_shuffle_and_deflate_chunks_is_an_error() {
    let comp = Compression::Deflate {
        level: 6,
        shuffle: true,
    };
    damaged_collection_is_an_error(comp, false, 0);
}

/// h5py's shuffle on variable-length strings is skipped: every chunk's
/// filter mask says filter 0 did not run, and the check must undo only the
/// filters that ran (HDF5 reading a chunk back through a dataset with the
/// whole pipeline gives other bytes, and no collection was checked).
#[test]
fn a_damaged_collection_behind_deflate_after_a_skipped_shuffle_is_an_error() {
    damaged_collection_is_an_error(Compression::None, true, 1);
}

#[test]
fn a_damaged_collection_behind_lzf_chunks_is_an_error() {
    damaged_collection_is_an_error(Compression::Lzf, false, 0);
}

/// Heap addresses in the heap IDs are relative to the superblock: in a file
/// with a user block the check adds its size (it looked at the wrong bytes,
/// found no collection there and let HDF5 loop).
#[test]
fn a_damaged_collection_in_a_file_with_a_user_block_is_an_error() {
    damaged_collection_in_file_is_an_error(Compression::None, false, 0, 1024);
}
