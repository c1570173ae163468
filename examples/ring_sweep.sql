-- ring_sweep: the classic ring-size experiment (heapdb only).
--
-- What it shows: bulk operations on a table larger than shared_buffers go
-- through a small ring of buffers instead of flooding the pool. Too small a
-- ring and every dirty buffer must be written (and the WAL flushed up to its
-- LSN) before reuse; too large and the ring falls out of the CPU cache.
-- PostgreSQL fixes the rings (256 kB for scans and VACUUM, 16 MB for COPY);
-- heapdb makes them settings (bulkread_ring_size, bulkwrite_ring_size,
-- vacuum_ring_size) so the sweet spot can be measured.
--
-- Run heapdb with a pool a quarter of the table's size (the table below is
-- about 512 MB):
--   heapdb --shared-buffers 128MB -f examples/ring_sweep.sql
-- Each block runs examples/ring_sweep_step.sql at one ring size: load with
-- INSERT ... SELECT (bulk write), VACUUM with no hint bits set, VACUUM of a
-- clean table, VACUUM after one dead tuple per page, and a qualified scan.
-- `cargo run --release --example bench -- --only ring_sweep` sweeps all
-- sizes from 8 kB to 8 MB and prints one table.
-- (With psql the SET lines fail and the rest runs at PostgreSQL's fixed rings.)
\set accounts 3932160
-- PostgreSQL's rule for scans: the ring for every table over a quarter of
-- the pool (heapdb's default takes it only when the table does not fit in
-- the pool's free and cold buffers).
SET bulkread_quarter_rule = on;

\set ring '8kB'
\ir ring_sweep_step.sql
\set ring '32kB'
\ir ring_sweep_step.sql
\set ring '256kB'
\ir ring_sweep_step.sql
\set ring '2MB'
\ir ring_sweep_step.sql
\set ring '8MB'
\ir ring_sweep_step.sql
