-- Plain and hash aggregates, the shapes their fast paths take
-- (count(*), an integer sum, one integer group key), HAVING, DISTINCT.
select count(*) from emp;
select count(*) from emp where dept = 4;
select sum(salary) from emp;
select min(id), max(id) from emp;
select dept, count(*), sum(salary) from emp group by dept;
select name, count(*) from emp group by name;
select dept, count(distinct salary) from emp group by dept;
select dept, max(salary) from emp group by dept having count(*) > 10 order by dept;
select distinct dept from emp;
select * from (select dept, count(*) c from emp group by dept) s where c > 5;
