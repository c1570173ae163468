//! The JSON set-returning functions: `json[b]_each[_text]`,
//! `json[b]_object_keys` and `json[b]_array_elements[_text]`, computed
//! whole from a constant argument (the planner turns them into rows, as
//! it does `unnest`). Over `json` the values are the members' original
//! text; over `jsonb`, their normalized form. Errors are PostgreSQL 15's
//! (`cannot call jsonb_each on a non-object`, `cannot deconstruct a
//! scalar`, ..., all 22023).

use super::funcs::jsonb_value;
use super::jsonb::Jsonb;
use super::ops::{self, JsonDoc};
use super::parse::{Kind, Node};
use crate::err;
use crate::error::{Error, Result};
use crate::types::datatype::DataType;
use crate::types::value::Value;

/// What a function returns per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `(key text, value)`
    Each,
    /// `(key text)`
    Keys,
    /// `(value)`
    Elements,
}

/// One of the JSON set-returning functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonSrf {
    name: &'static str,
    jsonb: bool,
    text: bool,
    shape: Shape,
}

const ALL: [JsonSrf; 10] = {
    const fn f(name: &'static str, jsonb: bool, text: bool, shape: Shape) -> JsonSrf {
        JsonSrf {
            name,
            jsonb,
            text,
            shape,
        }
    }
    [
        f("json_each", false, false, Shape::Each),
        f("json_each_text", false, true, Shape::Each),
        f("jsonb_each", true, false, Shape::Each),
        f("jsonb_each_text", true, true, Shape::Each),
        f("json_object_keys", false, true, Shape::Keys),
        f("jsonb_object_keys", true, true, Shape::Keys),
        f("json_array_elements", false, false, Shape::Elements),
        f("json_array_elements_text", false, true, Shape::Elements),
        f("jsonb_array_elements", true, false, Shape::Elements),
        f("jsonb_array_elements_text", true, true, Shape::Elements),
    ]
};

/// Whether `name` is a JSON set-returning function of one column (which
/// may be called in a select list).
pub fn single_column(name: &str) -> bool {
    JsonSrf::from_name(name).is_some_and(|f| f.shape != Shape::Each)
}

fn fail(msg: String) -> Error {
    err!(InvalidParameterValue, "{msg}")
}

impl JsonSrf {
    /// Looks a function up by its SQL name.
    pub fn from_name(name: &str) -> Option<JsonSrf> {
        ALL.iter().find(|f| f.name == name).copied()
    }

    fn value_type(self) -> DataType {
        match (self.text, self.jsonb) {
            (true, _) => DataType::Text,
            (false, true) => DataType::Jsonb,
            (false, false) => DataType::Json,
        }
    }

    /// The result columns.
    pub fn columns(self) -> Vec<(String, DataType)> {
        match self.shape {
            Shape::Each => vec![
                ("key".into(), DataType::Text),
                ("value".into(), self.value_type()),
            ],
            Shape::Keys => vec![(self.name.into(), DataType::Text)],
            Shape::Elements => vec![("value".into(), self.value_type())],
        }
    }

    /// The rows for argument `arg` of type `ty` (`unknown`: a literal,
    /// read as the function's JSON type). `Ok(None)` when the function
    /// takes no argument of type `ty`.
    pub fn rows(self, arg: &Value, ty: &DataType) -> Result<Option<Vec<Vec<Value>>>> {
        let want = if self.jsonb {
            DataType::Jsonb
        } else {
            DataType::Json
        };
        if *ty != want && *ty != DataType::Unknown {
            return Ok(None);
        }
        Ok(Some(match arg {
            Value::Null => Vec::new(),
            Value::Jsonb(j) => self.jsonb_rows(j)?,
            Value::Text(s) if self.jsonb => self.jsonb_rows(&Jsonb::parse(s)?)?,
            Value::Text(s) => {
                let doc = JsonDoc::parse(s)?;
                self.json_rows(&doc, &doc.root)?
            }
            _ => Vec::new(),
        }))
    }

    fn jsonb_out(self, v: &Jsonb) -> Value {
        if self.text {
            ops::as_text(v).map_or(Value::Null, |s| Value::text(&s))
        } else {
            jsonb_value(v.clone())
        }
    }

    fn jsonb_rows(self, j: &Jsonb) -> Result<Vec<Vec<Value>>> {
        let what = |j: &Jsonb| {
            if j.is_container() {
                "an array"
            } else {
                "a scalar"
            }
        };
        Ok(match (self.shape, j) {
            (Shape::Each, Jsonb::Object(m)) => m
                .iter()
                .map(|(k, v)| vec![Value::text(k), self.jsonb_out(v)])
                .collect(),
            (Shape::Each, _) => {
                return Err(fail(format!("cannot call {} on a non-object", self.name)))
            }
            (Shape::Keys, Jsonb::Object(m)) => {
                m.iter().map(|(k, _)| vec![Value::text(k)]).collect()
            }
            (Shape::Keys, other) => {
                return Err(fail(format!(
                    "cannot call {} on {}",
                    self.name,
                    what(other)
                )))
            }
            (Shape::Elements, Jsonb::Array(items)) => {
                items.iter().map(|v| vec![self.jsonb_out(v)]).collect()
            }
            (Shape::Elements, Jsonb::Object(_)) => {
                return Err(fail("cannot extract elements from an object".into()))
            }
            (Shape::Elements, _) => {
                return Err(fail("cannot extract elements from a scalar".into()))
            }
        })
    }

    fn json_out(self, doc: &JsonDoc<'_>, n: &Node) -> Value {
        if self.text {
            doc.as_text(n).map_or(Value::Null, |s| Value::text(&s))
        } else {
            Value::text(doc.text_of(n))
        }
    }

    fn json_rows(self, doc: &JsonDoc<'_>, root: &Node) -> Result<Vec<Vec<Value>>> {
        let scalar = !matches!(root.kind, Kind::Array(_) | Kind::Object(_));
        Ok(match (self.shape, &root.kind) {
            (Shape::Each, Kind::Object(m)) => m
                .iter()
                .map(|(k, v)| vec![Value::text(k), self.json_out(doc, v)])
                .collect(),
            (Shape::Each, _) if scalar => return Err(fail("cannot deconstruct a scalar".into())),
            (Shape::Each, _) => {
                return Err(fail("cannot deconstruct an array as an object".into()))
            }
            (Shape::Keys, Kind::Object(m)) => m.iter().map(|(k, _)| vec![Value::text(k)]).collect(),
            (Shape::Keys, _) => {
                let what = if scalar { "a scalar" } else { "an array" };
                return Err(fail(format!("cannot call {} on {what}", self.name)));
            }
            (Shape::Elements, Kind::Array(items)) => {
                items.iter().map(|v| vec![self.json_out(doc, v)]).collect()
            }
            (Shape::Elements, _) if scalar => {
                return Err(fail(format!("cannot call {} on a scalar", self.name)))
            }
            (Shape::Elements, _) => {
                return Err(fail(format!("cannot call {} on a non-array", self.name)))
            }
        })
    }
}
