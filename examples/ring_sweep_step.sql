-- One ring size of ring_sweep.sql (set :ring and :accounts first).
\echo ring size :ring
SET bulkread_ring_size = :'ring';
SET bulkwrite_ring_size = :'ring';
SET vacuum_ring_size = :'ring';
DROP TABLE IF EXISTS ring_t;
CREATE TABLE ring_t (aid int not null, bid int, abalance int, filler char(84));
CHECKPOINT;
\timing on
-- Bulk write.
INSERT INTO ring_t
  SELECT aid, (aid - 1) / 100000 + 1, 0, '' FROM generate_series(1, :accounts) AS aid;
CHECKPOINT;
-- VACUUM of a table whose hint bits are not set yet.
VACUUM ring_t;
CHECKPOINT;
-- VACUUM with nothing to do.
VACUUM ring_t;
-- One dead tuple per page (60 accounts per page).
DELETE FROM ring_t WHERE aid % 60 = 1;
CHECKPOINT;
VACUUM ring_t;
CHECKPOINT;
-- A scan that reads every page (the qualifier stops count(*) from using the
-- visibility map's counts).
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM ring_t WHERE aid > 0;
\timing off
