//! Many small appends, side by side: a file of `h5vec::create_file` (which
//! never reuses freed space) against one of `hdf5::File::create` (HDF5's
//! defaults, where h5vec keeps partly filled deflated chunks in the stored
//! form and moves a compressed chunk only between two flushes; SPEC
//! section 8), uncompressed and with deflate level 4.
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin appends [ROWS_PER_APPEND [APPENDS [REPS]]]
//! ```
//!
//! Each repetition runs every variant once, in a rotating order: save
//! 10,000 W1 rows (untimed), then `APPENDS` appends of `ROWS_PER_APPEND`
//! rows each (timed together; every append is a commit: data, flush,
//! `count`, flush). Reports the median time per append, the ratio of the
//! default file to `create_file`, and the file size.

use h5vec::SaveOptions;
use h5vec_bench::data;
use h5vec_bench::harness::{measure, numeric_args, stats};

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> AnyResult<()> {
    let a = numeric_args()?;
    let per = a.first().copied().unwrap_or(10);
    let appends = a.get(1).copied().unwrap_or(200);
    let reps = a.get(2).copied().unwrap_or(5);
    let base = 10_000;
    let rows = data::gen_w1(base + per * appends);
    let dir = std::env::temp_dir().join(format!("h5vec-appends-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let variants: [(&str, bool, SaveOptions); 4] = [
        ("create_file", true, SaveOptions::default()),
        ("File::create", false, SaveOptions::default()),
        ("create_file", true, SaveOptions::default().deflate(4)),
        ("File::create", false, SaveOptions::default().deflate(4)),
    ];
    let mut secs = vec![Vec::new(); variants.len()];
    let mut sizes = vec![0u64; variants.len()];
    for rep in 0..reps {
        for k in 0..variants.len() {
            let i = (k + rep) % variants.len();
            let (_, ours, opts) = &variants[i];
            let path = dir.join(format!("v{i}.h5"));
            let _ = std::fs::remove_file(&path);
            let f = if *ours {
                h5vec::create_file(&path)?
            } else {
                hdf5::File::create(&path)?
            };
            h5vec::save_vector_with(&f, "v", &rows[..base], opts)?;
            let (s, r) = measure(|| -> AnyResult<()> {
                for j in 0..appends {
                    let a = base + j * per;
                    h5vec::append_vector_with(&f, "v", &rows[a..a + per], opts)?;
                }
                Ok(())
            });
            r?;
            let n = h5vec::vector_len(&f, "v")?;
            if n != rows.len() as u64 {
                return Err(format!("{n} rows after the appends, expected {}", rows.len()).into());
            }
            drop(f);
            sizes[i] = std::fs::metadata(&path)?.len();
            secs[i].push(s.secs / appends as f64);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{appends} appends of {per} W1 rows after a save of {base}; {reps} repetitions; medians\n"
    );
    println!("| file | compression | per append (us) | min | max | file size (bytes) |");
    println!("|---|---|---:|---:|---:|---:|");
    let mut med = Vec::new();
    for (i, (name, _, opts)) in variants.iter().enumerate() {
        let (m, lo, hi) = stats(&secs[i]);
        med.push(m);
        let comp = match opts.get_compression() {
            h5vec::Compression::None => "none",
            _ => "deflate 4",
        };
        println!(
            "| {name} | {comp} | {:.0} | {:.0} | {:.0} | {} |",
            m * 1e6,
            lo * 1e6,
            hi * 1e6,
            sizes[i]
        );
    }
    println!(
        "\nFile::create / create_file: uncompressed {:.2}x, deflate {:.2}x",
        med[1] / med[0],
        med[3] / med[2]
    );
    Ok(())
}
