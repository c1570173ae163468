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
-- Join order search: a FROM order that would need a cross product is
-- joined along its equalities instead; the equalities shared through
-- d.id form one class, and its constant filters every member's scan.
select count(*) from emp e, proj p, dept d where e.dept = d.id and p.dept = d.id;
select count(*) from emp e, budget b, dept d where e.dept = d.id and d.id = b.dept and b.dept = 3;
-- An outer join is one item of the search; its inside keeps its order.
select count(*) from proj p, emp e, dept d left join budget b on b.dept = d.id where p.dept = d.id and e.dept = d.id;
-- join_collapse_limit = 1 keeps explicit joins in their written order.
set join_collapse_limit = 1;
select e.name, d.dname, p.title from emp e join dept d on e.dept = d.id join proj p on p.dept = d.id;
