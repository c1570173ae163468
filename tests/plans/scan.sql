-- Sequential scans, filters and projections.
select * from emp;
select id, name from emp where salary > 3000 and dept = 3;
select upper(name), salary * 2 as s2 from emp where name like 'e1%';
select * from emp where mgr is null or salary < 1100;
select 1 + 1;
