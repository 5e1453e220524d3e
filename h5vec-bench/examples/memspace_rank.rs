//! Profiling evidence for h5vec's dense columns. Run:
//! `cargo run --release -p h5vec-bench --example memspace_rank -- rank1` (or `rank2`).
//!
//! H5Dwrite of 1M x 3 f64 into a chunked (65536, 3) extendible
//! dataset in 64k-row batches, memory dataspace rank 1 (3*rows) vs rank 2 (rows, 3).
use hdf5_sys::{h5d, h5p::H5P_DEFAULT, h5s, h5t};
use std::time::Instant;

fn main() {
    let rank2 = std::env::args().nth(1).as_deref() == Some("rank2");
    let f = h5vec::hdf5::File::create(std::env::temp_dir().join("h5vec-memspace-rank.h5")).unwrap();
    let n = 1_000_000usize;
    let v: Vec<f64> = (0..3 * n).map(|i| i as f64).collect();
    let ds = f
        .new_dataset::<f64>()
        .chunk((65536, 3))
        .shape((hdf5::Extent::resizable(0), hdf5::Extent::fixed(3)))
        .create("p")
        .unwrap();
    let t = Instant::now();
    // SAFETY: valid dataset, dataspace and memory ids made above; the buffers hold the rows selected.
    unsafe {
        let mut start = 0usize;
        while start < n {
            let rows = (n - start).min(65536);
            let dims = [(start + rows) as u64, 3];
            h5d::H5Dset_extent(ds.id(), dims.as_ptr());
            let fs = h5d::H5Dget_space(ds.id());
            let st = [start as u64, 0];
            let cnt = [rows as u64, 3];
            h5s::H5Sselect_hyperslab(
                fs,
                h5s::H5S_seloper_t::H5S_SELECT_SET,
                st.as_ptr(),
                std::ptr::null(),
                cnt.as_ptr(),
                std::ptr::null(),
            );
            let ms = if rank2 {
                h5s::H5Screate_simple(2, cnt.as_ptr(), std::ptr::null())
            } else {
                let e = [3 * rows as u64];
                h5s::H5Screate_simple(1, e.as_ptr(), std::ptr::null())
            };
            let r = h5d::H5Dwrite(
                ds.id(),
                *h5t::H5T_NATIVE_DOUBLE,
                ms,
                fs,
                H5P_DEFAULT,
                v[3 * start..].as_ptr().cast(),
            );
            assert!(r >= 0);
            h5s::H5Sclose(ms);
            h5s::H5Sclose(fs);
            start += rows;
        }
    }
    drop(ds);
    drop(f);
    let _ = std::fs::remove_file(std::env::temp_dir().join("h5vec-memspace-rank.h5"));
    println!(
        "{} memspace: {:.4} s",
        if rank2 { "rank-2" } else { "rank-1" },
        t.elapsed().as_secs_f64()
    );
}
