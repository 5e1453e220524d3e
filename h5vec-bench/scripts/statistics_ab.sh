# The A/B of h5vec-bench/results/statistics-cost-1000000.md: one release `compare` binary
# (copied to /tmp/s38/compare-bin2), statistics off and on, interleaved; then /tmp/s38/abstat.py.
mkdir -p /tmp/ab38 && cd /tmp/ab38 && rm -rf /tmp/ab38/*
uptime > load-start.txt
for i in 1 2 3 4 5 6 7; do for v in off on; do for w in w1 w2; do
  if [ $v = off ]; then export H5VEC_BENCH_STATISTICS=0; else unset H5VEC_BENCH_STATISTICS; fi
  /tmp/s38/compare-bin2 --rows 1000000 --workload $w --passes 1 --warmup 1 \
    --dir /tmp/ab38/d-$v --jsonl /tmp/ab38/$v.jsonl --pass-label $i > /dev/null 2>>/tmp/ab38/err.log
  rm -rf /tmp/ab38/d-$v
done; done; done
uptime > load-end.txt
echo done > DONE
