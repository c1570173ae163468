-- count_star: count(*) over a vacuumed, cached table of 20,000,000 rows.
--
-- What it shows: how fast a DBMS answers count(*) when every page is
-- all-visible. PostgreSQL reads every heap page (with parallel workers);
-- heapdb keeps each all-visible page's live-tuple count in the visibility map
-- and sums those counts, reading only pages that are not all-visible. The
-- qualified count below cannot use the counts, and shows the speed of
-- reading line pointers and hint bits.
--
-- Run:  psql -X -f examples/count_star.sql      (a scratch database)
--       heapdb -f examples/count_star.sql
-- Scale down by editing :rows (200000 runs in a second).
\set rows 20000000

DROP TABLE IF EXISTS t;
CREATE TABLE t (a int4 not null, b int4 not null, c int4 not null, d int4 not null);
INSERT INTO t
  SELECT i, i % 1000, (i * 7919) % 1000000, (i * 104729) % 100000
  FROM generate_series(1, :rows) AS i;
-- VACUUM sets every page all-visible (and the visibility map's counts).
VACUUM ANALYZE t;

\timing on
-- Warm-up: bring the table into shared_buffers.
SELECT count(*) FROM t;
-- The measured statement, and its plan with buffer counts.
SELECT count(*) FROM t;
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM t;
-- A qualifier: every tuple must be looked at.
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM t WHERE a > 0;
-- The same without parallel workers (PostgreSQL's serial scan speed).
SET max_parallel_workers_per_gather = 0;
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM t;
RESET max_parallel_workers_per_gather;
\timing off
