//! The trees the planner builds and the executor runs, below both (as
//! PostgreSQL keeps them in `nodes/`): bound expressions ([`expr`], which
//! live in the lower module `crate::expr` because the catalog holds them
//! too, re-exported here), the resolved scalar functions they call
//! ([`func`]) and plan nodes ([`plannodes`]).
//!
//! Nothing here plans or evaluates: the planner (`plan`) builds these
//! values and the executor (`exec`) runs them, and neither needs the
//! other's code to name them.

pub use crate::expr;
pub use crate::expr::func;
pub mod plannodes;
pub mod window;

pub use expr::{Expr, ExprKind};
pub use func::Func;
pub use plannodes::{
    driving_scan, gather_scan, AggCall, AggOrder, Field, JoinKind, Node, Plan, SortKey, Srf,
    TableFunc,
};
