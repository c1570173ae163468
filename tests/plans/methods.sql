-- The enable_* join-method settings: a disabled method is a last resort,
-- as PostgreSQL's disable_cost makes it, never forbidden.
select * from emp join dept on emp.dept = dept.id;
set enable_hashjoin = off;
select * from emp join dept on emp.dept = dept.id;
-- A FULL join on equal keys has no method but the hash join.
select * from emp full join dept on emp.dept = dept.id;
set enable_hashjoin = on;
set enable_nestloop = off;
-- Without an equality only the nested loop can run it.
select * from dept d1 join dept d2 on d1.budget < d2.budget;
select * from emp join dept on emp.dept = dept.id;
set enable_nestloop = on;
-- Aggregates with more arguments or an ORDER BY in the call.
select dept, string_agg(name, ',' order by salary desc), corr(salary, mgr) from emp group by dept;
select string_agg(distinct dname, '; ' order by dname) from dept;
