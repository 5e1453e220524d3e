"""What the default statistics cost a W1 save, in pairs (results/statistics-cost-1000000.md):
the `profile` binary (`cargo build --profile profiling -p h5vec-bench --bin profile`)
run N times with statistics off (H5VEC_BENCH_STATISTICS=0) and on, alternating
which goes first; each run is timed as (10 saves + data generation) minus (data
generation alone), divided by 10. Prints the medians, minima and the median of the
paired differences on - off.
  python3 h5vec-bench/scripts/statistics_pairs.py [N [PROFILE_BINARY]]"""
import os
import statistics as st
import subprocess
import sys
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 60
P = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.environ.get('CARGO_TARGET_DIR', 'target'), 'profiling', 'profile')
REPS = 10


def run(v, reps):
    env = dict(os.environ)
    if v == 'off':
        env['H5VEC_BENCH_STATISTICS'] = '0'
    else:
        env.pop('H5VEC_BENCH_STATISTICS', None)
    t = time.perf_counter()
    subprocess.run([P, 'w1', 'save-fresh', 'none', '1000000', str(reps)], env=env, check=True)
    return time.perf_counter() - t


d = {'off': [], 'on': []}
for i in range(N):
    for v in (['off', 'on'] if i % 2 == 0 else ['on', 'off']):
        d[v].append((run(v, REPS) - run(v, 0)) / REPS * 1000)
for v in d:
    print(f'{v}: median {st.median(d[v]):.2f} ms, min {min(d[v]):.2f} ms (n={N})')
diff = [a - b for a, b in zip(d['on'], d['off'])]
print(f'paired on - off: median {st.median(diff):.2f} ms; '
      f'ratio of medians {st.median(d["on"]) / st.median(d["off"]):.3f}')
