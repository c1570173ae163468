-- pgbench_sum: aggregation and filtering scans over 5,000,000 pgbench accounts.
--
-- What it shows: the cost per tuple of a sequential scan that deforms a
-- column and feeds an aggregate: `sum_group` (hash aggregate over 50
-- branches), `filter_scan` (a two-term qualifier on every tuple) and
-- `sum(aid)`. On a cached table this is bounded by memory bandwidth and
-- per-tuple overhead; both cores are used (parallel scan with partial
-- aggregates combined).
--
-- Data: as pgbench makes it, aid 1..N, bid = (aid - 1) / 100000 + 1, one
-- account in ten with a non-zero balance (as after a pgbench run), a blank
-- char(84) filler.
--
-- Run:  psql -X -f examples/pgbench_sum.sql  /  heapdb -f examples/pgbench_sum.sql
\set accounts 5000000

DROP TABLE IF EXISTS pgbench_accounts;
CREATE TABLE pgbench_accounts (aid int not null, bid int, abalance int, filler char(84));
INSERT INTO pgbench_accounts
  SELECT aid, (aid - 1) / 100000 + 1,
         CASE WHEN aid % 10 = 0 THEN (aid * 7919) % 10001 - 5000 ELSE 0 END, ''
  FROM generate_series(1, :accounts) AS aid;
VACUUM ANALYZE pgbench_accounts;

\timing on
-- Warm-up.
SELECT count(*) FROM pgbench_accounts;
-- sum_group
SELECT bid, sum(abalance) FROM pgbench_accounts GROUP BY bid ORDER BY bid LIMIT 3;
EXPLAIN (ANALYZE, BUFFERS) SELECT bid, sum(abalance) FROM pgbench_accounts GROUP BY bid;
-- filter_scan
EXPLAIN (ANALYZE, BUFFERS)
  SELECT count(*) FROM pgbench_accounts WHERE abalance <> 0 OR aid % 1000 = 7;
-- filter_scan_sum
EXPLAIN (ANALYZE, BUFFERS) SELECT sum(aid) FROM pgbench_accounts;
-- One core only.
SET max_parallel_workers_per_gather = 0;
EXPLAIN (ANALYZE, BUFFERS) SELECT bid, sum(abalance) FROM pgbench_accounts GROUP BY bid;
RESET max_parallel_workers_per_gather;
\timing off
