-- TPC-H Q6 (forecasting revenue change), DATE = 1994-01-01, DISCOUNT = 0.06, QUANTITY = 24.
-- The discount range 0.06 +- 0.01 is written as the literals 0.05 and 0.07 (computing
-- 0.06 - 0.01 in floating point gives 0.049999..., which excludes l_discount = 0.05).
-- SQLite; dates are ISO text. The oracle for examples/tpch/q6.ra.
select
  sum(l_extendedprice * l_discount) as revenue
from lineitem
where l_shipdate >= '1994-01-01'
  and l_shipdate < '1995-01-01'
  and l_discount between 0.05 and 0.07
  and l_quantity < 24;
