-- hash_join: 5,000,000 pgbench accounts joined to 50 branches.
--
-- What it shows: a hash join whose build side (50 rows) fits in cache and
-- whose probe side is a full scan; the cost is the scan plus one hash probe
-- per tuple, then a hash aggregate. Compare with enable_hashjoin off (a
-- merge or nested-loop join) to see what the hash table buys.
--
-- Run:  psql -X -f examples/hash_join.sql  /  heapdb -f examples/hash_join.sql
\set accounts 5000000

DROP TABLE IF EXISTS pgbench_accounts;
DROP TABLE IF EXISTS pgbench_branches;
CREATE TABLE pgbench_accounts (aid int not null, bid int, abalance int, filler char(84));
CREATE TABLE pgbench_branches (bid int not null, bbalance int, filler char(88));
INSERT INTO pgbench_accounts
  SELECT aid, (aid - 1) / 100000 + 1,
         CASE WHEN aid % 10 = 0 THEN (aid * 7919) % 10001 - 5000 ELSE 0 END, ''
  FROM generate_series(1, :accounts) AS aid;
INSERT INTO pgbench_branches SELECT bid, 0, '' FROM generate_series(1, 50) AS bid;
VACUUM ANALYZE pgbench_accounts;
VACUUM ANALYZE pgbench_branches;

\timing on
-- Warm-up.
SELECT count(*) FROM pgbench_accounts;
-- The measured statement.
SELECT b.bid, count(*) FROM pgbench_accounts a, pgbench_branches b
  WHERE a.bid = b.bid GROUP BY b.bid ORDER BY b.bid LIMIT 3;
EXPLAIN (ANALYZE, BUFFERS)
  SELECT b.bid, count(*) FROM pgbench_accounts a, pgbench_branches b
  WHERE a.bid = b.bid GROUP BY b.bid;
-- Without the hash join.
SET enable_hashjoin = off;
EXPLAIN (ANALYZE, BUFFERS)
  SELECT b.bid, count(*) FROM pgbench_accounts a, pgbench_branches b
  WHERE a.bid = b.bid GROUP BY b.bid;
RESET enable_hashjoin;
\timing off
