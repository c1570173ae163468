//! Unit tests of statement shapes.
use super::*;

#[test]
fn shapes_parameterize_comparison_operands_only() {
    let sql = "select abalance from a where aid = 42;";
    let s = Shape::of(sql).unwrap();
    assert_eq!(s.key, "select abalance from a where aid = $");
    let at = sql.find("42").unwrap();
    assert_eq!(s.lits, vec![(42, at, at + 2)]);
    let t = Shape::of("SELECT abalance FROM a WHERE aid = 7").unwrap();
    assert_ne!(t.key, s.key, "keys are the text's tokens");
    assert_eq!(
        Shape::of("select count(*) from a where aid between 5 and 10")
            .unwrap()
            .key,
        "select count ( * ) from a where aid between $ and $"
    );
    // Arithmetic, casts, non-comparison places, other literals: verbatim.
    for sql in [
        "select 1",
        "select * from a where aid = 5::int8",
        "select * from a limit 5",
        "select * from a where aid = 5.0",
        "select * from a where aid = -2147483648",
        "select * from a where aid = 2 * -5",
        "select * from a where aid = -5 * 2",
        "select * from a where aid = 3000000000",
        "select * from a where x = 'a5'",
    ] {
        assert!(Shape::of(sql).is_none(), "{sql}");
    }
    for sql in [
        "select * into b from a where aid = 5",
        "select * from a where aid = 5 for update",
        "select * from a where aid = 5; select 2",
        "insert into a values (5)",
        "select * from a where aid = 'unterminated",
        "/* c */ select * from a where aid = 5",
        "update a set abalance = 1 where aid = 5 returning *",
        "delete from a where aid = 5",
    ] {
        assert!(Shape::of(sql).is_none(), "{sql}");
    }
    // Sign minus folded into the literal; a subtraction's operand alone.
    let sql = "  update a set abalance = abalance + - 7 where aid = -5";
    let s = Shape::of(sql).unwrap();
    assert!(s.writes);
    assert_eq!(s.key, "update a set abalance = abalance + $ where aid = $");
    let (m, f) = (sql.find("- 7").unwrap(), sql.find("-5").unwrap());
    assert_eq!(s.lits, vec![(-7, m, m + 3), (-5, f, f + 2)]);
    let s = Shape::of("update a set abalance = abalance - 7 where aid = 5").unwrap();
    assert_eq!(s.key, "update a set abalance = abalance - $ where aid = $");
    assert_eq!(s.lits[0].0, 7);
    assert!(!Shape::of("select 1 from a where aid = 5").unwrap().writes);
    // An operand of a sum the planner folds: its template is refused
    // when the plans are compared.
    let s = Shape::of("select * from a where aid = 5 + 1").unwrap();
    assert_eq!(s.key, "select * from a where aid = 5 + $");
    let s = Shape::of("select * from a where aid = 5 and bid = 6").unwrap();
    assert_eq!(
        s.with_values("select * from a where aid = 5 and bid = 6", &[70, 80]),
        "select * from a where aid = 70 and bid = 80"
    );
    let [up, down] = s.stand_ins();
    assert!(up[0] < up[1] && down[0] > down[1]);
    assert!(up.iter().chain(&down).all(|v| *v != 5 && *v != 6));
}

#[test]
fn relit_statements_have_the_shape_of_their_text() {
    let base = [
        "update a set abalance = abalance + 5 where aid = 7;",
        "update a set abalance = abalance + -5 where aid = 7;",
        "update a set abalance = abalance - 5 where aid=7",
        "select abalance from a where aid = 42;",
        "select count(*) from a where aid between -3 and 9",
        "select abalance from a where aid =-42",
    ];
    let variants = [
        "update a set abalance = abalance + 1234 where aid = 99999;",
        "update a set abalance = abalance + -1234 where aid = 1;",
        "update a set abalance = abalance + - 1234 where aid = 1;",
        "update a set abalance = abalance - -5 where aid=0",
        "update a set abalance = abalance - 5 where aid=-1",
        "update a set abalance = abalance - 5 where aid=2147483647",
        "select abalance from a where aid = 7;",
        "select abalance from a where aid = -7;",
        "select abalance from a where aid =7",
        "select abalance from a where aid =-7",
        "select count(*) from a where aid between 3 and -9",
        "select count(*) from a where aid between - 3 and 9",
    ];
    let mut hits = 0;
    for b in base {
        let shape = Shape::of(b).unwrap();
        for v in variants {
            let Some(lits) = shape.relit(b, v) else {
                continue;
            };
            hits += 1;
            let own = Shape::of(v).unwrap();
            assert_eq!((&own.key, &own.lits), (&shape.key, &lits), "{b} -> {v}");
        }
    }
    assert!(hits >= 12, "{hits}");
    // Not the same text around the literals, or not an int4 literal.
    let b = "select abalance from a where aid = 42;";
    let shape = Shape::of(b).unwrap();
    for v in [
        "select abalance from a where aid = 42.5;",
        "select abalance from a where aid = 2147483648;",
        "select abalance from a where aid = 42 ;",
        "select abalance from a where aid = ;",
        "select abalance from a where aid = 4e2;",
        "select abalance from b where aid = 42;",
        "select abalance from a where aid = 42",
        "select abalance from a where aid = -2147483648;",
    ] {
        assert_eq!(shape.relit(b, v), None, "{v}");
    }
    // A sign may not join the operator before it into another token.
    let b = "select abalance from a where aid =42";
    let shape = Shape::of(b).unwrap();
    assert_eq!(
        shape.relit(b, "select abalance from a where aid =-42"),
        None
    );
}
