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
