-- Hash joins of every kind, with the smaller side hashed; USING, NATURAL,
-- cross and non-equi joins (nested loops).
select e.name, d.dname from emp e join dept d on e.dept = d.id;
select * from dept d left join proj p on p.dept = d.id;
select * from dept d right join proj p on p.dept = d.id;
select * from emp e full join dept d on e.dept = d.id;
select * from emp e join dept d on e.dept = d.id and e.salary > d.budget;
select * from emp e join dept d using (id);
select * from proj natural join budget;
select * from proj natural join dept;
select * from emp cross join dept;
select * from dept d, proj p where d.id < p.dept;
select e.name, d.dname, p.title from emp e join dept d on e.dept = d.id join proj p on p.dept = d.id;
