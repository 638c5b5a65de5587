-- TPC-H Q9 (product type profit measure), COLOR = 'green'.
-- SQLite (the oracle turns case_sensitive_like on, as LIKE is in SQL); dates are ISO
-- text, so extract(year from d) is written cast(strftime('%Y', d) as integer).
-- The oracle for examples/tpch/q9.ra.
select
  nation,
  o_year,
  sum(amount) as sum_profit
from (
  select
    n_name as nation,
    cast(strftime('%Y', o_orderdate) as integer) as o_year,
    l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
  from part, supplier, lineitem, partsupp, orders, nation
  where s_suppkey = l_suppkey
    and ps_suppkey = l_suppkey
    and ps_partkey = l_partkey
    and p_partkey = l_partkey
    and o_orderkey = l_orderkey
    and s_nationkey = n_nationkey
    and p_name like '%green%'
) as profit
group by nation, o_year
order by nation, o_year desc;
