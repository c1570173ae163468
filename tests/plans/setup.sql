-- The schema and data every golden plan runs against. Small enough that
-- ANALYZE reads every row (its sample is 30,000 rows), so the statistics,
-- and with them the plans, are the same on every run.
create table emp (id int not null, dept int, name text, salary int, mgr int);
create table dept (id int not null, dname text, budget int);
create table proj (pid int not null, dept int, title text);
create table budget (dept int, amount int);
insert into emp select g, g % 20, 'e' || g, 1000 + (g * 37) % 5000, case when g % 10 = 0 then null else g / 10 end from generate_series(1, 20000) g;
insert into dept select g, 'd' || g, g * 100 from generate_series(0, 24) g;
insert into proj select g, g % 30, 't' || g from generate_series(1, 300) g;
insert into budget select g, g * 1000 from generate_series(0, 39) g;
analyze;
