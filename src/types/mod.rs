//! SQL types and values: type ids, text input and output as PostgreSQL
//! prints them, casts, comparison, hashing and arithmetic.
