-- analyze_prefetch: ANALYZE's block sampling with and without prefetching.
--
-- What it shows: ANALYZE reads a random sample of 30,000 pages (at the
-- default statistics target) in block order. From a cold OS cache each read
-- is a random disk read; issuing the next reads ahead of time
-- (maintenance_io_concurrency > 0, posix_fadvise WILLNEED) overlaps them.
-- On a warm cache the difference vanishes, which this script shows; for the
-- cold case the table's files must be evicted from every cache between the
-- two runs (restart the server or heapdb, then posix_fadvise DONTNEED the
-- files), which is what
--   cargo run --release --example bench -- --only analyze_cold
-- does.
--
-- Run:  psql -X -f examples/analyze_prefetch.sql  /  heapdb -f examples/analyze_prefetch.sql
\set accounts 5000000

DROP TABLE IF EXISTS pgbench_accounts;
CREATE TABLE pgbench_accounts (aid int not null, bid int, abalance int, filler char(84));
INSERT INTO pgbench_accounts
  SELECT aid, (aid - 1) / 100000 + 1, 0, '' FROM generate_series(1, :accounts) AS aid;
VACUUM pgbench_accounts;
CHECKPOINT;

\timing on
SET maintenance_io_concurrency = 0;
ANALYZE pgbench_accounts;
SET maintenance_io_concurrency = 10;
ANALYZE pgbench_accounts;
RESET maintenance_io_concurrency;
\timing off
-- The sample's result: what the planner now believes.
SELECT relpages, reltuples FROM pg_class WHERE relname = 'pgbench_accounts';
