-- Index scans: chosen by cost over the statistics, conditions split into
-- Index Cond and Filter, ORDER BY .. LIMIT in index order, index-only
-- scans, nested loops probing an index, and the enable_* settings.
create index emp_id on emp (id);
create index emp_dept_salary on emp (dept, salary desc);
create index proj_pid on proj (pid) include (title);
analyze;
select * from emp where id = 42;
select name from emp where id = 42 and salary > 1000;
select * from emp where 42 = id;
select id from emp where id between 100 and 120;
select * from emp where id in (3, 1, 2);
select id, salary from emp where dept = 3 and salary > 5900;
select salary from emp where dept = 3 and salary < 1100 order by salary desc;
select salary from emp where dept = 3 order by salary limit 5;
select * from emp order by id limit 10;
select * from emp order by id desc limit 10;
select * from emp where salary > 3000;
select count(*) from emp where id between 100 and 2000;
select * from emp where id is null;
select title from proj where pid = 7;
select d.dname, e.name from dept d join emp e on e.id = d.budget where d.id < 3;
set enable_indexscan = off;
select * from emp where id = 42;
set enable_indexscan = on;
set enable_seqscan = off;
select count(*) from emp where dept = 3;
