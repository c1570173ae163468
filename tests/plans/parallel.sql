-- Parallel plans: every table counts as large enough here.
set min_parallel_table_scan_size = 0;
select count(*) from emp;
select dept, sum(salary) from emp group by dept;
select * from emp where salary > 5900;
set max_parallel_workers_per_gather = 0;
select count(*) from emp;
