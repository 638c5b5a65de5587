-- TPC-H Q13 (customer distribution), WORD1 = 'special', WORD2 = 'requests'.
-- SQLite (the oracle turns case_sensitive_like on, as LIKE is in SQL); the derived
-- table's column list c_orders (c_custkey, c_count) is written as column aliases.
-- The oracle for examples/tpch/q13.ra.
select
  c_count,
  count(*) as custdist
from (
  select
    c_custkey,
    count(o_orderkey) as c_count
  from customer left outer join orders
    on c_custkey = o_custkey
   and o_comment not like '%special%requests%'
  group by c_custkey
) as c_orders
group by c_count
order by custdist desc, c_count desc;
