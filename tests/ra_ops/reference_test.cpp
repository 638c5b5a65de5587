// execute_reference (ra_ops/reference.cpp): binding inputs by name, errors for
// missing or mismatched inputs, several outputs, shared subplans.
#include "reference_test_util.h"

namespace ranc::test {
namespace {

const std::vector<Attribute> kA = {{"k", Type::I32}, {"v", Type::String}};

TEST(ExecuteReference, MissingInputNamesIt) {
  ProgramBuilder b;
  auto x = b.input("orders", kA);
  auto y = b.input("customers", kA);
  b.output(x.union_with(y), "out");
  Program p = check(b.program());
  try {
    execute_reference(p, {{"orders", rel(kA, {})}});
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(e.first().message.find("'customers'"), std::string::npos) << e.first().message;
  }
}

TEST(ExecuteReference, SchemaMismatchShowsBoth) {
  ProgramBuilder b;
  b.output(b.input("x", kA), "out");
  Program p = check(b.program());
  for (const auto& wrong :
       std::vector<std::vector<Attribute>>{{{"k", Type::I64}, {"v", Type::String}},    // a type
                                           {{"key", Type::I32}, {"v", Type::String}},  // a name
                                           {{"k", Type::I32}}}) {                      // the arity
    try {
      execute_reference(p, {{"x", rel(wrong, {})}});
      ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::SchemaMismatch);
      const std::string& m = e.first().message;
      EXPECT_NE(m.find(Schema{kA, 0}.str()), std::string::npos) << m;
      EXPECT_NE(m.find(Schema{wrong, 0}.str()), std::string::npos) << m;
    }
  }
}

TEST(ExecuteReference, InputKeepsDeclaredKeyAndData) {
  ProgramBuilder b;
  b.output(b.input("x", kA, 1), "out");
  Program p = check(b.program());
  auto outs = execute_reference(p, {{"x", rel(kA, {{I(2), S("b")}, {I(1), S("a")}})}});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].schema().key_size, 1u);
  EXPECT_ROWS_EQ(outs[0], Rows{{I(2), S("b")}, {I(1), S("a")}});
}

TEST(ExecuteReference, SeveralOutputsAndSharedSubplans) {
  ProgramBuilder b;
  auto x = b.input("x", kA);
  auto big = x.select(col("k") > 1);
  b.output(big.project({"v"}), "vs");
  b.output(big.reduce({}, {count("n")}), "n");
  b.output(x, "all");
  Program p = check(b.program());
  HostRelation in = rel(kA, {{I(1), S("a")}, {I(2), S("b")}, {I(3), S("c")}});
  auto outs = execute_reference(p, {{"x", in}, {"unused", rel(kA, {})}});
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_BAG_EQ(outs[0], Rows{{S("b")}, {S("c")}});
  EXPECT_ROWS_EQ(outs[1], Rows{{L(2)}});
  EXPECT_BAG_EQ(outs[2], rows_of(in));
}

TEST(ExecuteReference, UncheckedProgramIsRejected) {
  ProgramBuilder b;
  b.output(b.input("x", kA), "out");
  EXPECT_THROW(execute_reference(b.program(), {{"x", rel(kA, {})}}), UserError);
}

TEST(ExecuteReference, APipeline) {
  // Revenue per customer name for orders after a date, top 2 by revenue.
  std::vector<Attribute> oa = {
      {"o_cust", Type::I32}, {"o_date", Type::Date}, {"o_price", Type::F64}};
  std::vector<Attribute> ca = {{"c_id", Type::I32}, {"c_name", Type::String}};
  ProgramBuilder b;
  auto o = b.input("orders", oa);
  auto c = b.input("customers", ca);
  auto q = o.select(col("o_date") >= date_lit("1995-01-01"))
               .join(c, {"o_cust"}, {"c_id"})
               .reduce({"c_name"}, {sum(col("o_price"), "revenue"), count("n")})
               .sort({desc("revenue")})
               .limit(2);
  b.output(q, "top");
  HostRelation out =
      run(b, {{"orders", rel(oa, {{I(1), Dt("1995-03-01"), D(10.0)},
                                  {I(2), Dt("1994-12-31"), D(500.0)},
                                  {I(2), Dt("1995-01-01"), D(20.0)},
                                  {I(3), Dt("1996-06-30"), D(5.0)},
                                  {I(1), Dt("1997-01-01"), D(15.5)},
                                  {I(9), Dt("1997-01-01"), D(99.0)}})},
              {"customers", rel(ca, {{I(1), S("ann")}, {I(2), S("bo")}, {I(3), S("cy")}})}});
  EXPECT_ROWS_EQ(out, Rows{{S("ann"), D(25.5), L(2)}, {S("bo"), D(20.0), L(1)}});
}

}  // namespace
}  // namespace ranc::test
