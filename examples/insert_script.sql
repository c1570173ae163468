-- insert_script: 100,000 single-row INSERTs into a 23-column table, each
-- its own transaction, piped through one process.
--
-- What it shows: the fixed cost of a statement (parse, plan, execute, WAL,
-- commit) when the work per statement is tiny. With synchronous_commit on,
-- every commit waits for a WAL flush (group commit cannot help a single
-- client); with it off, the flush happens in the background.
--
-- First generate the statements (a deterministic file, the bench's own):
--   cargo run --release --example bench -- --gen-insert-script /tmp/fehistory_insert.sql
-- then run this script and time the whole process:
--   time psql -X -q -f examples/insert_script.sql
--   time heapdb -q -f examples/insert_script.sql
-- Change synchronous_commit below to compare on and off.

DROP TABLE IF EXISTS fehistory_1;
CREATE TABLE fehistory_1 (cust_id int, branch_id int, seq_no int, kind char(1),
  flag_a char(1), flag_b char(1), status char(1), qty int, ref_no int, alt_ref int,
  side char(1), lot int, acct int, prev_acct int, term int, opened timestamp,
  closed timestamp, ref2 int, term2 int, x1 int, x2 int, x3 int, x4 int);
CHECKPOINT;
SET synchronous_commit = off;

\i /tmp/fehistory_insert.sql

SELECT count(*) FROM fehistory_1;
-- What one statement costs, and what it touches.
\timing on
EXPLAIN (ANALYZE, BUFFERS) INSERT INTO fehistory_1 values (64,14,252,'D','-','-','s',1,4027,NULL,'S',1,4088,NULL,32,'Thu Jan 07 15:15:00 1999 EST','Fri Jan 08 08:30:38 1999 EST',4027,32,NULL,NULL,46,NULL);
\timing off
