-- TPC-H Q19 (discounted revenue), QUANTITY1 = 1, QUANTITY2 = 10, QUANTITY3 = 20,
-- BRAND1 = 'Brand#12', BRAND2 = 'Brand#23', BRAND3 = 'Brand#34'. The conditions that
-- all three branches share (p_partkey = l_partkey, l_shipmode, l_shipinstruct) are
-- factored out of the OR: equivalent, and SQLite then joins instead of a product.
-- SQLite. The oracle for examples/tpch/q19.ra.
select
  sum(l_extendedprice * (1 - l_discount)) as revenue
from lineitem, part
where p_partkey = l_partkey
  and l_shipmode in ('AIR', 'AIR REG')
  and l_shipinstruct = 'DELIVER IN PERSON'
  and (
    (p_brand = 'Brand#12'
     and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
     and l_quantity >= 1 and l_quantity <= 1 + 10
     and p_size between 1 and 5)
    or (p_brand = 'Brand#23'
     and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
     and l_quantity >= 10 and l_quantity <= 10 + 10
     and p_size between 1 and 10)
    or (p_brand = 'Brand#34'
     and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
     and l_quantity >= 20 and l_quantity <= 20 + 10
     and p_size between 1 and 15));
