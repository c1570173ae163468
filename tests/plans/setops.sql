-- UNION, UNION ALL, INTERSECT, EXCEPT.
select id from dept union select dept from proj;
select id from dept union all select dept from proj;
select id from dept intersect select dept from proj;
select id from dept except select dept from proj;
