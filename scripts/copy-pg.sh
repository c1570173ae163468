#!/bin/sh
# Regenerates tests/data/copy/*.out: the bytes PostgreSQL 15 writes for
# COPY TO of the rows in tests/data/copy/types.sql (checked by
# tests/copy_pg.rs, which loads the same SQL into heapdb and compares).
# Needs a running PostgreSQL 15 reachable with psql, e.g.
#   PGHOST=/tmp PGPORT=54337 PGUSER=postgres sh scripts/copy-pg.sh
set -eu
cd "$(dirname "$0")/../tests/data/copy"
psql -X -q -v ON_ERROR_STOP=1 <<SQL
DROP TABLE IF EXISTS types, texts;
\i types.sql
SQL
out() { psql -X -q -v ON_ERROR_STOP=1 -c "COPY $2 TO STDOUT $3" > "$1"; }
out text.out "types" ""
out text_header.out "types" "WITH (HEADER)"
out text_opts.out "types (id, t, v, f8)" "WITH (DELIMITER '|', NULL 'NIL')"
out csv.out "types" "WITH (FORMAT csv)"
out csv_header.out "types" "CSV HEADER"
out csv_opts.out "types (id, t, c)" "WITH (FORMAT csv, DELIMITER ';', NULL '\\N', QUOTE '''', ESCAPE '\\', FORCE_QUOTE (c))"
out csv_force_all.out "types (id, v)" "WITH (FORMAT csv, FORCE_QUOTE *)"
out types_ints.out "types (id, i2, i4, i8, t, v, c)" ""
out texts.out "texts" ""
out texts_opts.out "texts" "WITH (DELIMITER '|', NULL 'NIL', HEADER)"
out texts_cols.out "texts (k, t, c)" "WITH (DELIMITER ',')"
out query.out "(SELECT id, t || '!' AS bang, i2 * 2 AS twice FROM types WHERE id > 3 ORDER BY id DESC)" "WITH (FORMAT csv, HEADER)"
psql -X -q -c "DROP TABLE types, texts"
