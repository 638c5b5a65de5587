-- TPC-H Q4 (order priority checking), DATE = 1993-07-01 (three months).
-- SQLite; dates are ISO text. The oracle for examples/tpch/q4.ra.
select
  o_orderpriority,
  count(*) as order_count
from orders
where o_orderdate >= '1993-07-01'
  and o_orderdate < '1993-10-01'
  and exists (
    select * from lineitem
    where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
group by o_orderpriority
order by o_orderpriority;
