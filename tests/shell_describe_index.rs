//! psql's `\d INDEX` in the shell (`Index "public.NAME"`: the stored
//! columns with `Key?` and `Definition`, then the kind, method and table),
//! and the `Indexes:` lines of `\d TABLE` for a primary key, a UNIQUE
//! constraint, a unique index with DESC and INCLUDE, and NULLS FIRST,
//! each as psql 15 prints them.

mod common;

#[test]
fn describe_prints_indexes_as_psql() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "create table dd (a int primary key, b text unique, c int, d int);\n\
                  create unique index dd_cd on dd (c desc, d) include (b);\n\
                  create index dd_d on dd (d nulls first);\n\
                  \\d dd\n\\d dd_pkey\n\\d dd_b_key\n\\d dd_cd\n\\d dd_d\n";
    let (out, err, code) = common::output_texts(common::shell(dir.path(), &["-q"], script));
    assert_eq!((err.as_str(), code), ("", 0), "{out}");
    let indexes = "Indexes:\n\
                   \x20   \"dd_pkey\" PRIMARY KEY, btree (a)\n\
                   \x20   \"dd_b_key\" UNIQUE CONSTRAINT, btree (b)\n\
                   \x20   \"dd_cd\" UNIQUE, btree (c DESC, d) INCLUDE (b)\n\
                   \x20   \"dd_d\" btree (d NULLS FIRST)\n";
    assert!(out.contains(indexes), "{out}");
    let described = "\x20       Index \"public.dd_pkey\"\n\
                     \x20Column |  Type   | Key? | Definition \n\
                     --------+---------+------+------------\n\
                     \x20a      | integer | yes  | a\n\
                     primary key, btree, for table \"public.dd\"\n\
                     \n\
                     \x20     Index \"public.dd_b_key\"\n\
                     \x20Column | Type | Key? | Definition \n\
                     --------+------+------+------------\n\
                     \x20b      | text | yes  | b\n\
                     unique, btree, for table \"public.dd\"\n\
                     \n\
                     \x20        Index \"public.dd_cd\"\n\
                     \x20Column |  Type   | Key? | Definition \n\
                     --------+---------+------+------------\n\
                     \x20c      | integer | yes  | c\n\
                     \x20d      | integer | yes  | d\n\
                     \x20b      | text    | no   | b\n\
                     unique, btree, for table \"public.dd\"\n\
                     \n\
                     \x20        Index \"public.dd_d\"\n\
                     \x20Column |  Type   | Key? | Definition \n\
                     --------+---------+------+------------\n\
                     \x20d      | integer | yes  | d\n\
                     btree, for table \"public.dd\"\n\
                     \n";
    assert!(out.ends_with(described), "{out}");
}

/// Partial indexes: `\d TABLE` shows the predicate as `pg_get_indexdef`'s
/// pretty form after ` WHERE`, `\d INDEX` as `predicate (...)` in the
/// footer; both as psql 15 prints them, and again after a reopen (the
/// predicate read back from the catalog file).
#[test]
fn describe_prints_partial_index_predicates_as_psql() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "create table dp (a int, b int, c text, d date);\n\
                  create index dp_a on dp (a) where a > 10;\n\
                  create index dp_b on dp (b) where b > 1 and c is not null;\n\
                  create index dp_c on dp (a) where c like 'x%' or b in (1, 2);\n\
                  create unique index dp_u on dp (c) where d > '2020-01-01';\n\
                  create index dp_e on dp (b) where a is not null and c <> 'x' or a - b - 1 < 3;\n\
                  create index dp_f on dp (c) where c in ('x', 'y') and a between 1 and 5;\n";
    let (out, err, code) = common::output_texts(common::shell(dir.path(), &["-q"], script));
    assert_eq!((err.as_str(), code), ("", 0), "{out}");
    let indexes = "Indexes:\n\
                   \x20   \"dp_a\" btree (a) WHERE a > 10\n\
                   \x20   \"dp_b\" btree (b) WHERE b > 1 AND c IS NOT NULL\n\
                   \x20   \"dp_c\" btree (a) WHERE c ~~ 'x%'::text OR (b = ANY (ARRAY[1, 2]))\n\
                   \x20   \"dp_e\" btree (b) WHERE a IS NOT NULL AND c <> 'x'::text OR (a - b - 1) < 3\n\
                   \x20   \"dp_f\" btree (c) WHERE (c = ANY (ARRAY['x'::text, 'y'::text])) AND a >= 1 AND a <= 5\n\
                   \x20   \"dp_u\" UNIQUE, btree (c) WHERE d > '2020-01-01'::date\n";
    let described = "\x20       Index \"public.dp_u\"\n\
                     \x20Column | Type | Key? | Definition \n\
                     --------+------+------+------------\n\
                     \x20c      | text | yes  | c\n\
                     unique, btree, for table \"public.dp\", predicate (d > '2020-01-01'::date)\n\
                     \n";
    for round in 0..2 {
        let (out, err, code) =
            common::output_texts(common::shell(dir.path(), &["-q"], "\\d dp\n\\d dp_u\n"));
        assert_eq!((err.as_str(), code), ("", 0), "round {round}: {out}");
        assert!(out.contains(indexes), "round {round}: {out}");
        assert!(out.ends_with(described), "round {round}: {out}");
    }
}
