-- Sort, LIMIT and OFFSET.
select * from emp order by salary desc limit 5;
select * from emp order by dept, id limit 10 offset 5;
select name from emp order by name;
select * from dept limit 3;
