//! The statement corpus: every construct of the grammar, each checked
//! against its printed form (which spells out the tree: keywords upper case,
//! identifiers folded, parentheses where the tree groups, casts as CAST),
//! and re-parsed from that form to the same tree.

use heapdb_grammar::{parse, parse_one};

/// `(input, expected printed form)`.
const CORPUS: &[(&str, &str)] = &[
    // ---- CREATE / DROP / TRUNCATE
    (
        "create table T (a int, B integer not null, c bigint default 0 primary key)",
        "CREATE TABLE t (a integer, b integer NOT NULL, c bigint DEFAULT 0 PRIMARY KEY)",
    ),
    (
        "CREATE TABLE IF NOT EXISTS \"Mixed\" (x smallint NULL, y int2, z int4, w int8)",
        "CREATE TABLE IF NOT EXISTS \"Mixed\" (x smallint NULL, y smallint, z integer, w bigint)",
    ),
    (
        "create table t (a real, b float4, c double precision, d float8, e float, f float(10), g float(40))",
        "CREATE TABLE t (a real, b real, c double precision, d double precision, e double precision, f real, g double precision)",
    ),
    (
        "create table t (a numeric, b numeric(10), c numeric(10,2), d decimal(5, 1), e dec)",
        "CREATE TABLE t (a numeric, b numeric(10), c numeric(10,2), d numeric(5,1), e numeric)",
    ),
    (
        "create table t (a boolean, b bool, c text, d varchar(20), e character varying(3), f varchar)",
        "CREATE TABLE t (a boolean, b boolean, c text, d character varying(20), e character varying(3), f character varying)",
    ),
    (
        "create table t (a char(1), b character(10), c char, d date, e timestamp, f timestamp without time zone, g interval)",
        "CREATE TABLE t (a character(1), b character(10), c character, d date, e timestamp without time zone, f timestamp without time zone, g interval)",
    ),
    (
        "create table t (a timestamptz, b timestamp with time zone, c serial, d \"MyType\")",
        "CREATE TABLE t (a timestamp with time zone, b timestamp with time zone, c serial, d \"MyType\")",
    ),
    (
        "create table t (a int default -1 not null, b text default 'x' || 'y', primary key (a, b), unique (b), check (a > 0))",
        "CREATE TABLE t (a integer DEFAULT -1 NOT NULL, b text DEFAULT 'x' || 'y', PRIMARY KEY (a, b), UNIQUE (b), CHECK (a > 0))",
    ),
    (
        "create table t (a int unique check (a <> 0)) with (fillfactor = 70)",
        "CREATE TABLE t (a integer UNIQUE CHECK (a <> 0)) WITH (fillfactor = 70)",
    ),
    ("create table t ()", "CREATE TABLE t ()"),
    ("create table public.t (a int)", "CREATE TABLE public.t (a integer)"),
    ("create table t2 as select * from t", "CREATE TABLE t2 AS SELECT * FROM t"),
    (
        "create table if not exists t2 (x, y) as select 1, 2",
        "CREATE TABLE IF NOT EXISTS t2 (x, y) AS SELECT 1, 2",
    ),
    ("create table t3 as values (1)", "CREATE TABLE t3 AS VALUES (1)"),
    ("drop table t", "DROP TABLE t"),
    ("drop table if exists a, B cascade", "DROP TABLE IF EXISTS a, b CASCADE"),
    ("drop table a restrict", "DROP TABLE a"),
    ("truncate t", "TRUNCATE TABLE t"),
    ("truncate table a, b", "TRUNCATE TABLE a, b"),
    // ---- INSERT
    ("insert into t values (1, 'a', null)", "INSERT INTO t VALUES (1, 'a', NULL)"),
    (
        "INSERT INTO \"fehistory_1\" values (64,14,252,'D','-','-','s',1,4027,NULL,'S',1,4088,NULL,32,'Thu Jan 07 15:15:00 1999 EST','Fri Jan 08 08:30:38 1999 EST',4027,32,NULL,NULL,46,NULL)",
        "INSERT INTO fehistory_1 VALUES (64, 14, 252, 'D', '-', '-', 's', 1, 4027, NULL, 'S', 1, 4088, NULL, 32, 'Thu Jan 07 15:15:00 1999 EST', 'Fri Jan 08 08:30:38 1999 EST', 4027, 32, NULL, NULL, 46, NULL)",
    ),
    (
        "insert into t (a, b) values (1, 2), (3, default) returning *",
        "INSERT INTO t (a, b) VALUES (1, 2), (3, DEFAULT) RETURNING *",
    ),
    (
        "insert into t select a from u where a > 1 returning a, b as c",
        "INSERT INTO t SELECT a FROM u WHERE a > 1 RETURNING a, b AS c",
    ),
    ("insert into t (select 1)", "INSERT INTO t SELECT 1"),
    ("insert into t default values", "INSERT INTO t DEFAULT VALUES"),
    // ---- SELECT
    ("select 1", "SELECT 1"),
    ("SELECT", "SELECT"),
    ("select from t", "SELECT FROM t"),
    ("select * from t", "SELECT * FROM t"),
    ("select distinct a, t.* , s.t.* from s.t", "SELECT DISTINCT a, t.*, s.t.* FROM s.t"),
    ("select all a from t", "SELECT a FROM t"),
    ("select a as x, b y, c \"Z\", d as from from t", "SELECT a AS x, b AS y, c AS \"Z\", d AS \"from\" FROM t"),
    ("select T.A, s.t.c, \"T\".\"A b\" from t", "SELECT t.a, s.t.c, \"T\".\"A b\" FROM t"),
    (
        "select a from t where a = 1 and b <> 2 or not c",
        "SELECT a FROM t WHERE a = 1 AND b <> 2 OR NOT c",
    ),
    (
        "select count(*), sum(b) from t group by a, b having count(*) > 1",
        "SELECT count(*), sum(b) FROM t GROUP BY a, b HAVING count(*) > 1",
    ),
    (
        "select a from t order by a, b desc, c asc nulls first, d desc nulls last limit 10 offset 5",
        "SELECT a FROM t ORDER BY a, b DESC, c NULLS FIRST, d DESC NULLS LAST LIMIT 10 OFFSET 5",
    ),
    ("select a from t limit all", "SELECT a FROM t"),
    ("select a from t offset 3 rows limit 1", "SELECT a FROM t LIMIT 1 OFFSET 3"),
    ("select a from t fetch first row only", "SELECT a FROM t LIMIT 1"),
    ("select a from t offset 1 row fetch next 2 rows only", "SELECT a FROM t LIMIT 2 OFFSET 1"),
    (
        "select a from t order by a fetch first 2 rows with ties",
        "SELECT a FROM t ORDER BY a FETCH FIRST (2) ROWS WITH TIES",
    ),
    ("select a from t order by a using >, b using <", "SELECT a FROM t ORDER BY a DESC, b"),
    (
        "select distinct on (a, b + 1) a, c from t order by a",
        "SELECT DISTINCT ON (a, b + 1) a, c FROM t ORDER BY a",
    ),
    ("select 1 union select 2", "SELECT 1 UNION SELECT 2"),
    ("select 1 union all select 2 union select 3", "SELECT 1 UNION ALL SELECT 2 UNION SELECT 3"),
    ("select 1 union (select 2 union select 3)", "SELECT 1 UNION (SELECT 2 UNION SELECT 3)"),
    ("select 1 union select 2 intersect select 3", "SELECT 1 UNION SELECT 2 INTERSECT SELECT 3"),
    ("(select 1 union select 2) intersect select 3", "(SELECT 1 UNION SELECT 2) INTERSECT SELECT 3"),
    ("select 1 except distinct select 2 order by 1 limit 1", "SELECT 1 EXCEPT SELECT 2 ORDER BY 1 LIMIT 1"),
    ("(select 1 order by 1 limit 1) union all select 2", "(SELECT 1 ORDER BY 1 LIMIT 1) UNION ALL SELECT 2"),
    ("values (1, 'a'), (2, 'b')", "VALUES (1, 'a'), (2, 'b')"),
    ("values (1) order by 1", "VALUES (1) ORDER BY 1"),
    (
        "with x as (select 1 as a), y (b) as (values (2)) select * from x, y",
        "WITH x AS (SELECT 1 AS a), y (b) AS (VALUES (2)) SELECT * FROM x, y",
    ),
    // ---- FROM items
    ("select * from a, b as x, c y", "SELECT * FROM a, b AS x, c AS y"),
    (
        "select * from a join b on a.id = b.id inner join c on true",
        "SELECT * FROM a JOIN b ON a.id = b.id JOIN c ON TRUE",
    ),
    (
        "select * from a left join b on x left outer join c using (id, k)",
        "SELECT * FROM a LEFT JOIN b ON x LEFT JOIN c USING (id, k)",
    ),
    (
        "select * from a right join b on x full outer join c on y cross join d",
        "SELECT * FROM a RIGHT JOIN b ON x FULL JOIN c ON y CROSS JOIN d",
    ),
    ("select * from a natural join b", "SELECT * FROM a NATURAL JOIN b"),
    ("select * from a natural left join b", "SELECT * FROM a NATURAL LEFT JOIN b"),
    (
        "select * from a join (b join c on p) on q",
        "SELECT * FROM a JOIN (b JOIN c ON p) ON q",
    ),
    ("select * from (a join b on p)", "SELECT * FROM a JOIN b ON p"),
    (
        "select * from (select 1 as x) as s, (values (1), (2)) v(n)",
        "SELECT * FROM (SELECT 1 AS x) AS s, (VALUES (1), (2)) AS v(n)",
    ),
    ("select * from (select 1) s", "SELECT * FROM (SELECT 1) AS s"),
    (
        "select g from generate_series(1, 10) g",
        "SELECT g FROM generate_series(1, 10) AS g",
    ),
    (
        "select x from generate_series(1, 10, 2) as g(x)",
        "SELECT x FROM generate_series(1, 10, 2) AS g(x)",
    ),
    (
        "select * from heap_page_items('t', 0), buffer_cache_stats(), page_header('t', 0) h",
        "SELECT * FROM heap_page_items('t', 0), buffer_cache_stats(), page_header('t', 0) AS h",
    ),
    // ---- expressions
    ("select 1 + 2 * 3", "SELECT 1 + 2 * 3"),
    ("select (1 + 2) * 3", "SELECT (1 + 2) * 3"),
    ("select 1 - (2 - 3)", "SELECT 1 - (2 - 3)"),
    ("select (1 - 2) - 3", "SELECT 1 - 2 - 3"),
    ("select 2 ^ 3 ^ 2, -2 ^ 2, 7 % 3, 7 / 2", "SELECT 2 ^ 3 ^ 2, -2 ^ 2, 7 % 3, 7 / 2"),
    ("select - a, + b, - - 5, -(5), - (a + 1)", "SELECT -a, +b, - -5, -5, -(a + 1)"),
    ("select 'a' || 'b' || 1 + 2", "SELECT 'a' || 'b' || 1 + 2"),
    ("select a=b, a!=b, a<>b, a<b, a<=b, a>b, a>=b", "SELECT a = b, a <> b, a <> b, a < b, a <= b, a > b, a >= b"),
    ("select a=-1, a<-1, a*-1", "SELECT a = -1, a < -1, a * -1"),
    ("select not a = b, not (a and b), (not a) = b", "SELECT NOT a = b, NOT (a AND b), (NOT a) = b"),
    ("select a or b and c, (a or b) and c", "SELECT a OR b AND c, (a OR b) AND c"),
    (
        "select 123456789012345678901234567890, 1.50, .5, 5., 1e10, 1.5E-3, 0",
        "SELECT 123456789012345678901234567890, 1.50, .5, 5., 1e10, 1.5E-3, 0",
    ),
    (
        "select 'it''s', E'a\\nb', E'\\'', $$dollar 'quoted'$$, $tag$x$$y$tag$, ''",
        "SELECT 'it''s', 'a\nb', '''', 'dollar ''quoted''', 'x$$y', ''",
    ),
    ("select true, false, null, TRUE", "SELECT TRUE, FALSE, NULL, TRUE"),
    (
        "select date '2024-01-02', timestamp '2024-01-02 03:04:05', interval '1 day', text 'x', int '5'",
        "SELECT date '2024-01-02', timestamp without time zone '2024-01-02 03:04:05', interval '1 day', text 'x', integer '5'",
    ),
    (
        "select double precision '1.5', varchar(3) 'abc', timestamp with time zone 'now'",
        "SELECT double precision '1.5', character varying(3) 'abc', timestamp with time zone 'now'",
    ),
    (
        "select a is null, a is not null, a isnull, a notnull",
        "SELECT a IS NULL, a IS NOT NULL, a IS NULL, a IS NOT NULL",
    ),
    (
        "select a is true, a is not false, a is unknown, a is not unknown",
        "SELECT a IS TRUE, a IS NOT FALSE, a IS UNKNOWN, a IS NOT UNKNOWN",
    ),
    (
        "select a is distinct from b, a is not distinct from b + 1",
        "SELECT a IS DISTINCT FROM b, a IS NOT DISTINCT FROM b + 1",
    ),
    (
        "select a between 1 and 10, a not between b and c + 1 and d",
        "SELECT a BETWEEN 1 AND 10, a NOT BETWEEN b AND c + 1 AND d",
    ),
    (
        "select a in (1, 2, 3), a not in (select b from u), a in ((select 1))",
        "SELECT a IN (1, 2, 3), a NOT IN (SELECT b FROM u), a IN (SELECT 1)",
    ),
    (
        "select a like 'x%', a not like 'y' escape '!', a ilike 'Z', a not ilike 'w'",
        "SELECT a LIKE 'x%', a NOT LIKE 'y' ESCAPE '!', a ILIKE 'Z', a NOT ILIKE 'w'",
    ),
    (
        "select exists (select 1), not exists (select 1 from t)",
        "SELECT EXISTS (SELECT 1), NOT EXISTS (SELECT 1 FROM t)",
    ),
    ("select (select max(a) from t) + 1", "SELECT (SELECT max(a) FROM t) + 1"),
    (
        "select case when a = 1 then 'one' when a = 2 then 'two' else 'many' end",
        "SELECT CASE WHEN a = 1 THEN 'one' WHEN a = 2 THEN 'two' ELSE 'many' END",
    ),
    ("select case a when 1 then 'x' end", "SELECT CASE a WHEN 1 THEN 'x' END"),
    (
        "select cast(a as int), a::text, a::numeric(10,2)::varchar(5), cast('1' as char(1))",
        "SELECT CAST(a AS integer), CAST(a AS text), CAST(CAST(a AS numeric(10,2)) AS character varying(5)), CAST('1' AS character(1))",
    ),
    ("select -a::int", "SELECT -CAST(a AS integer)"),
    (
        "select count(*), count(distinct a), count(all a), sum(a) filter (where a > 0)",
        "SELECT count(*), count(DISTINCT a), count(a), sum(a) FILTER (WHERE a > 0)",
    ),
    (
        "select string_agg(a, ',' order by a desc), now(), pg_catalog.lower('X'), left('abc', 2)",
        "SELECT string_agg(a, ',' ORDER BY a DESC), now(), pg_catalog.lower('X'), \"left\"('abc', 2)",
    ),
    (
        "select coalesce(a, 0), nullif(a, 1), greatest(1, 2), least(1, 2), abs(-1)",
        "SELECT coalesce(a, 0), nullif(a, 1), greatest(1, 2), least(1, 2), abs(-1)",
    ),
    (
        "select current_date, current_timestamp, localtimestamp, current_user",
        "SELECT CURRENT_DATE, CURRENT_TIMESTAMP, LOCALTIMESTAMP, CURRENT_USER",
    ),
    ("select a /* c /* nested */ */ from -- comment\n t", "SELECT a FROM t"),
    ("select timestamp, \"interval\" from t", "SELECT \"timestamp\", \"interval\" FROM t"),
    // ---- UPDATE / DELETE
    ("update t set a = 1", "UPDATE t SET a = 1"),
    (
        "update t x set a = a + 1, b = default from u where x.id = u.id returning x.a",
        "UPDATE t AS x SET a = a + 1, b = DEFAULT FROM u WHERE x.id = u.id RETURNING x.a",
    ),
    ("delete from t", "DELETE FROM t"),
    (
        "delete from t as x using u where x.a = u.a returning *",
        "DELETE FROM t AS x USING u WHERE x.a = u.a RETURNING *",
    ),
    // ---- COPY
    ("copy t from stdin", "COPY t FROM STDIN"),
    ("copy t (a, b) from '/tmp/f'", "COPY t (a, b) FROM '/tmp/f'"),
    (
        "copy t from '/tmp/f' with (format csv, delimiter ',', null '', header, quote '\"', escape '\\', freeze true)",
        "COPY t FROM '/tmp/f' WITH (FORMAT csv, DELIMITER ',', NULL '', HEADER true, QUOTE '\"', ESCAPE '\\', FREEZE true)",
    ),
    (
        "copy t from '/tmp/f' (format text, header false, freeze off)",
        "COPY t FROM '/tmp/f' WITH (FORMAT text, HEADER false, FREEZE false)",
    ),
    ("copy t from 'f' csv header", "COPY t FROM 'f' WITH (FORMAT csv, HEADER true)"),
    ("copy t from 'f' with delimiter ','", "COPY t FROM 'f' WITH (DELIMITER ',')"),
    (
        "copy t from 'f' with delimiter as '|' null as 'N' csv quote as '''' escape '\\' force not null a, b",
        "COPY t FROM 'f' WITH (DELIMITER '|', NULL 'N', FORMAT csv, QUOTE '''', ESCAPE '\\', FORCE_NOT_NULL (a, b))",
    ),
    ("copy t to stdout", "COPY t TO STDOUT"),
    (
        "copy (select a from t) to '/tmp/out' with (format csv, force_quote *)",
        "COPY (SELECT a FROM t) TO '/tmp/out' WITH (FORMAT csv, FORCE_QUOTE *)",
    ),
    ("copy binary t to stdout", "COPY t TO STDOUT WITH (FORMAT binary)"),
    // ---- VACUUM / ANALYZE / CHECKPOINT
    ("vacuum", "VACUUM"),
    ("vacuum t", "VACUUM t"),
    ("vacuum full freeze verbose analyze t", "VACUUM (FULL, FREEZE, VERBOSE, ANALYZE) t"),
    ("vacuum verbose", "VACUUM (VERBOSE)"),
    ("vacuum freeze a, b", "VACUUM (FREEZE) a, b"),
    (
        "vacuum (verbose, analyze, freeze, disable_page_skipping) t",
        "VACUUM (FREEZE, VERBOSE, ANALYZE, DISABLE_PAGE_SKIPPING) t",
    ),
    ("vacuum (verbose false, analyze on) t (a, b)", "VACUUM (ANALYZE) t (a, b)"),
    ("analyze", "ANALYZE"),
    ("analyse verbose t", "ANALYZE VERBOSE t"),
    ("analyze t (a, b), u", "ANALYZE t (a, b), u"),
    ("analyze (verbose) t", "ANALYZE VERBOSE t"),
    ("checkpoint", "CHECKPOINT"),
    // ---- EXPLAIN
    ("explain select 1", "EXPLAIN SELECT 1"),
    ("explain analyze select 1", "EXPLAIN (ANALYZE true) SELECT 1"),
    ("explain analyze verbose select 1", "EXPLAIN (ANALYZE true, VERBOSE true) SELECT 1"),
    ("explain verbose select 1", "EXPLAIN (VERBOSE true) SELECT 1"),
    (
        "explain (analyze, buffers true, costs off, timing false, verbose) select * from t",
        "EXPLAIN (ANALYZE true, VERBOSE true, COSTS false, BUFFERS true, TIMING false) SELECT * FROM t",
    ),
    ("explain (analyze false) select 1", "EXPLAIN SELECT 1"),
    (
        "explain (summary on, format json) insert into t values (1)",
        "EXPLAIN (SUMMARY true, FORMAT json) INSERT INTO t VALUES (1)",
    ),
    ("explain update t set a = 1", "EXPLAIN UPDATE t SET a = 1"),
    ("explain delete from t", "EXPLAIN DELETE FROM t"),
    ("explain create table x as select 1", "EXPLAIN CREATE TABLE x AS SELECT 1"),
    ("explain (select 1)", "EXPLAIN SELECT 1"),
    // ---- transactions
    ("begin", "BEGIN"),
    ("begin transaction", "BEGIN"),
    ("begin work", "BEGIN"),
    ("begin isolation level repeatable read", "BEGIN ISOLATION LEVEL REPEATABLE READ"),
    (
        "begin transaction isolation level read committed",
        "BEGIN ISOLATION LEVEL READ COMMITTED",
    ),
    ("start transaction", "BEGIN"),
    (
        "start transaction isolation level serializable, read only",
        "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY",
    ),
    ("begin read write isolation level read uncommitted", "BEGIN ISOLATION LEVEL READ UNCOMMITTED READ WRITE"),
    ("commit", "COMMIT"),
    ("commit work", "COMMIT"),
    ("end", "COMMIT"),
    ("end transaction", "COMMIT"),
    ("rollback", "ROLLBACK"),
    ("abort", "ROLLBACK"),
    ("rollback transaction", "ROLLBACK"),
    // ---- SET / SHOW / RESET
    ("set work_mem = '64MB'", "SET work_mem TO '64MB'"),
    ("set session enable_seqscan to off", "SET enable_seqscan TO off"),
    ("set local statement_timeout to 0", "SET LOCAL statement_timeout TO 0"),
    ("set x to default", "SET x TO DEFAULT"),
    ("set x = -1.5", "SET x TO -1.5"),
    ("set search_path to a, \"B\", 'c'", "SET search_path TO a, \"B\", 'c'"),
    ("set heapdb.timing = on", "SET heapdb.timing TO on"),
    ("set time zone 'UTC'", "SET timezone TO 'UTC'"),
    ("set time zone local", "SET timezone TO DEFAULT"),
    ("set transaction isolation level repeatable read", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"),
    ("show shared_buffers", "SHOW shared_buffers"),
    ("show all", "SHOW ALL"),
    ("show time zone", "SHOW timezone"),
    ("show transaction isolation level", "SHOW transaction_isolation"),
    ("reset work_mem", "RESET work_mem"),
    ("reset all", "RESET ALL"),
];

#[test]
fn corpus_prints_as_expected_and_round_trips() {
    let mut failures = Vec::new();
    for (input, expected) in CORPUS {
        let statement = match parse_one(input) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{input}\n  parse error: {e} at {}", e.offset));
                continue;
            }
        };
        let printed = statement.to_string();
        if printed != *expected {
            failures.push(format!(
                "{input}\n  printed:  {printed}\n  expected: {expected}"
            ));
            continue;
        }
        match parse_one(&printed) {
            Ok(again) if again == statement => {}
            Ok(again) => failures.push(format!("{input}\n  reparsed differently: {again:?}")),
            Err(e) => failures.push(format!("{input}\n  printed form fails: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_script_parses_to_one_statement_each() {
    let script: String = CORPUS.iter().map(|(sql, _)| format!("{sql};\n")).collect();
    let statements = parse(&script).expect("the corpus parses as one script");
    assert_eq!(statements.len(), CORPUS.len());
}
