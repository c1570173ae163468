-- Subqueries in FROM and WHERE: IN / NOT IN (hashed), EXISTS, scalar.
select * from dept where id in (select dept from proj);
select * from dept where id not in (select dept from proj);
select * from dept where exists (select 1 from proj where dept > 3);
select * from emp where salary > (select avg(salary) from emp);
select s.dept from (select dept from emp where salary > 5000) s group by s.dept;
