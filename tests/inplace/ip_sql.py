"""A reproduction of LangGraph's "Build a custom SQL agent" tutorial, for in-place verdict tests.

Source: https://docs.langchain.com/oss/python/langgraph/sql-agent (``src/oss/langgraph/sql-agent.mdx``
in github.com/langchain-ai/docs; the older notebook was
langchain-ai.github.io/langgraph/tutorials/sql/sql-agent/). Reproduced as published:

- the three tools of ``SQLDatabaseToolkit`` with their names, argument names and output forms:
  ``sql_db_list_tables`` (a comma-separated list), ``sql_db_schema`` (``CREATE TABLE`` plus 3
  sample rows per table; ``Error: table_names {...} not found in database`` for an unknown
  table) and ``sql_db_query`` (``str()`` of the list of row tuples; ``Error: ...`` when the
  database rejects the query: the toolkit returns errors, it does not raise);
- the graph: ``list_tables`` (a predetermined tool call the node runs itself) ->
  ``call_get_schema`` -> ``get_schema`` (ToolNode) -> ``generate_query`` -> (a tool call?)
  ``check_query`` -> ``run_query`` (ToolNode) -> ``generate_query``, else END; the tutorial's
  system prompts for ``generate_query`` and ``check_query``.

What differs: the database is a small local SQLite file holding part of Chinook (4 tables,
7 tracks) instead of the downloaded Chinook.db, and the model is a scripted policy
(``ip_policy.PolicyModel``) that reads only its conversation. Two policies:

- ``trusting``: takes every result at face value; on the first question it writes
  ``Track.Length`` (a column that does not exist) before ``Track.Milliseconds``; when the
  database is unavailable it answers anyway from what it guesses (a realistic hallucination);
- ``checking``: writes the right SQL; retries a query once when the service fails; re-runs a
  query once whose result is implausible (an average track longer than a day, a few tracks
  costing over 100); gives up, saying so, when the second try fails the same way.
"""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path
from typing import Any, Literal

from ip_policy import PolicyModel, call, is_service_error, question, results, say, system
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

TABLES = {
    "Artist": (
        "ArtistId INTEGER NOT NULL, Name NVARCHAR(120), PRIMARY KEY (ArtistId)",
        [
            (1, "AC/DC"),
            (2, "Accept"),
            (3, "Miles Davis"),
        ],
    ),
    "Album": (
        "AlbumId INTEGER NOT NULL, Title NVARCHAR(160) NOT NULL, ArtistId INTEGER NOT NULL, "
        "PRIMARY KEY (AlbumId)",
        [
            (1, "For Those About To Rock We Salute You", 1),
            (2, "Balls to the Wall", 2),
            (3, "Kind of Blue", 3),
        ],
    ),
    "Genre": (
        "GenreId INTEGER NOT NULL, Name NVARCHAR(120), PRIMARY KEY (GenreId)",
        [
            (1, "Rock"),
            (2, "Jazz"),
            (3, "Metal"),
            (4, "Sci Fi & Fantasy"),
        ],
    ),
    "Track": (
        "TrackId INTEGER NOT NULL, Name NVARCHAR(200) NOT NULL, AlbumId INTEGER, "
        "GenreId INTEGER, Milliseconds INTEGER NOT NULL, UnitPrice NUMERIC(10, 2) NOT NULL, "
        "PRIMARY KEY (TrackId)",
        [
            (1, "For Those About To Rock (We Salute You)", 1, 1, 343719, 0.99),
            (2, "Balls to the Wall", 2, 1, 342562, 0.99),
            (3, "Fast As a Shark", 2, 3, 230619, 0.99),
            (4, "So What", 3, 2, 545000, 1.29),
            (5, "Blue in Green", 3, 2, 337000, 1.29),
            (6, "Battlestar Galactica", None, 4, 2952702, 1.99),
            (7, "Lost Planet", None, 4, 2870952, 1.99),
        ],
    ),
}


def make_db(path: Path) -> Path:
    """Write the local database (deterministic) and return its path."""
    with sqlite3.connect(path) as con:
        for name, (cols, rows) in TABLES.items():
            con.execute(f'DROP TABLE IF EXISTS "{name}"')
            con.execute(f'CREATE TABLE "{name}" ({cols})')
            marks = ", ".join("?" * len(rows[0]))
            con.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)
    return path


def make_tools(db: Path) -> list[Any]:
    """The toolkit's three tools over ``db`` (names, arguments and output forms as published)."""

    def run(sql: str) -> list[tuple]:
        with sqlite3.connect(db) as con:
            return con.execute(sql).fetchall()

    @tool("sql_db_list_tables")
    def list_tables(tool_input: str = "") -> str:
        """Input is an empty string, output is a comma-separated list of tables in the database."""
        names = run("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        return ", ".join(n for (n,) in names)

    @tool("sql_db_schema")
    def schema(table_names: str) -> str:
        """Input to this tool is a comma-separated list of tables, output is the schema and sample
        rows for those tables. Be sure that the tables actually exist by calling
        sql_db_list_tables first! Example Input: table1, table2, table3"""
        wanted = [t.strip() for t in table_names.split(",") if t.strip()]
        known = {n for (n,) in run("SELECT name FROM sqlite_master WHERE type='table'")}
        missing = {t for t in wanted if t not in known}
        if missing:
            return f"Error: table_names {missing} not found in database"
        parts = []
        for t in wanted:
            ((ddl,),) = run(f"SELECT sql FROM sqlite_master WHERE name='{t}'")
            with sqlite3.connect(db) as con:
                cur = con.execute(f'SELECT * FROM "{t}" LIMIT 3')
                cols = [d[0] for d in cur.description]
                rows = cur.fetchall()
            sample = "\n".join("\t".join(str(v) for v in r) for r in rows)
            parts.append(
                f"\n{ddl}\n\n/*\n3 rows from {t} table:\n{chr(9).join(cols)}\n{sample}\n*/"
            )
        return "\n\n".join(parts)

    @tool("sql_db_query")
    def query(query: str) -> str:
        """Input to this tool is a detailed and correct SQL query, output is a result from the
        database. If the query is not correct, an error message will be returned. If an error is
        returned, rewrite the query, check the query, and try again."""
        try:
            return str(run(query))
        except sqlite3.Error as exc:
            return f"Error: ({type(exc).__module__}.{type(exc).__name__}) {exc}"

    return [list_tables, schema, query]


GENERATE_QUERY_SYSTEM_PROMPT = """
You are an agent designed to interact with a SQL database.
Given an input question, create a syntactically correct sqlite query to run,
then look at the results of the query and return the answer. Unless the user
specifies a specific number of examples they wish to obtain, always limit your
query to at most 5 results.

You can order the results by a relevant column to return the most interesting
examples in the database. Never query for all the columns from a specific table,
only ask for the relevant columns given the question.

DO NOT make any DML statements (INSERT, UPDATE, DELETE, DROP etc.) to the database.
"""

CHECK_QUERY_SYSTEM_PROMPT = """
You are a SQL expert with a strong attention to detail.
Double check the sqlite query for common mistakes, including:
- Using NOT IN with NULL values
- Using UNION when UNION ALL should have been used
- Using BETWEEN for exclusive ranges
- Data type mismatch in predicates
- Properly quoting identifiers
- Using the correct number of arguments for functions
- Casting to the correct data type
- Using the proper columns for joins

If there are any of the above mistakes, rewrite the query. If there are no mistakes,
just reproduce the original query.

You will call the appropriate tool to execute the query after running this check.
"""


def build(model: Any, tools: list[Any]) -> Any:
    """The tutorial's graph over ``tools`` (the wrapped tools, in make_tools' order)."""
    list_tables_tool, get_schema_tool, run_query_tool = tools
    get_schema_node = ToolNode([get_schema_tool], name="get_schema")
    run_query_node = ToolNode([run_query_tool], name="run_query")

    def list_tables(state: MessagesState) -> dict:
        tool_call = {"name": "sql_db_list_tables", "args": {}, "id": "abc123", "type": "tool_call"}
        tool_call_message = AIMessage(content="", tool_calls=[tool_call])
        tool_message = list_tables_tool.invoke(tool_call)
        response = AIMessage(f"Available tables: {tool_message.content}")
        return {"messages": [tool_call_message, tool_message, response]}

    def call_get_schema(state: MessagesState) -> dict:
        llm_with_tools = model.bind_tools([get_schema_tool], tool_choice="any")
        return {"messages": [llm_with_tools.invoke(state["messages"])]}

    def generate_query(state: MessagesState) -> dict:
        system_message = {"role": "system", "content": GENERATE_QUERY_SYSTEM_PROMPT}
        llm_with_tools = model.bind_tools([run_query_tool])
        return {"messages": [llm_with_tools.invoke([system_message] + state["messages"])]}

    def check_query(state: MessagesState) -> dict:
        system_message = {"role": "system", "content": CHECK_QUERY_SYSTEM_PROMPT}
        tool_call = state["messages"][-1].tool_calls[0]
        user_message = {"role": "user", "content": tool_call["args"]["query"]}
        llm_with_tools = model.bind_tools([run_query_tool], tool_choice="any")
        response = llm_with_tools.invoke([system_message, user_message])
        response.id = state["messages"][-1].id
        return {"messages": [response]}

    def should_continue(state: MessagesState) -> Literal["check_query", "__end__"]:
        last = state["messages"][-1]
        return "check_query" if getattr(last, "tool_calls", None) else END

    builder = StateGraph(MessagesState)
    builder.add_node(list_tables)
    builder.add_node(call_get_schema)
    builder.add_node(get_schema_node, "get_schema")
    builder.add_node(generate_query)
    builder.add_node(check_query)
    builder.add_node(run_query_node, "run_query")
    builder.add_edge(START, "list_tables")
    builder.add_edge("list_tables", "call_get_schema")
    builder.add_edge("call_get_schema", "get_schema")
    builder.add_edge("get_schema", "generate_query")
    builder.add_conditional_edges("generate_query", should_continue)
    builder.add_edge("check_query", "run_query")
    builder.add_edge("run_query", "generate_query")
    return builder.compile()


# -- the questions, and how each policy answers them -------------------------------------------------
LONGEST = "Which genre on average has the longest tracks?"
JAZZ = "What is the total price of all Jazz tracks?"
GOOD_SQL = {
    LONGEST: "SELECT Genre.Name, AVG(Track.Milliseconds) AS AvgMilliseconds FROM Track JOIN Genre "
    "ON Track.GenreId = Genre.GenreId GROUP BY Genre.GenreId ORDER BY AvgMilliseconds DESC "
    "LIMIT 5;",
    JAZZ: "SELECT SUM(Track.UnitPrice) FROM Track JOIN Genre ON Track.GenreId = Genre.GenreId "
    "WHERE Genre.Name = 'Jazz';",
}
#: the trusting policy's first attempt at the first question: a column that does not exist
BAD_SQL = {LONGEST: GOOD_SQL[LONGEST].replace("Milliseconds", "Length")}
#: what the trusting policy says when the database is unavailable (guessed, not read)
GUESS = {
    LONGEST: 'The genre with the longest tracks on average is "Rock", with an average track '
    "length of approximately 343,000 milliseconds.",
    JAZZ: "The Jazz tracks cost 1.29 in total.",
}
TASKS = [
    {"id": "longest", "input": LONGEST, "expected": ["Sci Fi & Fantasy", 2911827]},
    {"id": "jazz", "input": JAZZ, "expected": 2.58},
]


def _answer(q: str, rows: list[tuple]) -> str:
    if q == LONGEST:
        name, avg = rows[0]
        return (
            f'The genre with the longest tracks on average is "{name}", with an average track '
            f"length of approximately {round(avg):,} milliseconds."
        )
    return f"The Jazz tracks cost {rows[0][0]} in total."


def _implausible(q: str, rows: list[tuple]) -> bool:
    value = rows[0][1] if q == LONGEST else rows[0][0]
    return value > (86_400_000 if q == LONGEST else 100)


def policy(kind: str):
    """The scripted model of one policy (``trusting`` or ``checking``)."""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        sys_prompt = system(messages)
        if sys_prompt.lstrip().startswith("You are a SQL expert"):  # check_query: reproduce it
            return call("sql_db_query", {"query": str(messages[-1].content)}, messages)
        q = question(messages)
        last = messages[-1]
        if isinstance(last, AIMessage) and str(last.content).startswith("Available tables:"):
            listed = [t.strip() for t in str(last.content).split(":", 1)[1].split(",")]
            wanted = [t for t in listed if t.split("-")[0] in ("Genre", "Track")]
            return call("sql_db_schema", {"table_names": ", ".join(wanted)}, messages)
        done = results(messages, "sql_db_query")
        if not done:
            first = BAD_SQL.get(q, GOOD_SQL[q]) if kind == "trusting" else GOOD_SQL[q]
            return call("sql_db_query", {"query": first}, messages)
        out = done[-1]
        if is_service_error(out):
            if kind == "trusting":
                return say(GUESS[q])
            if sum(is_service_error(r) for r in done) == 1:
                return call("sql_db_query", {"query": GOOD_SQL[q]}, messages)
            return say(
                "I could not get an answer: the database query failed twice (service unavailable)."
            )
        if out.startswith("Error:"):
            return call("sql_db_query", {"query": GOOD_SQL[q]}, messages)
        rows = ast.literal_eval(out)
        if kind == "checking" and _implausible(q, rows):
            if sum(_implausible(q, ast.literal_eval(r)) for r in done if r.startswith("[")) == 1:
                return call("sql_db_query", {"query": GOOD_SQL[q]}, messages)
            return say("The query returns implausible values, so I cannot give a reliable answer.")
        return say(_answer(q, rows))

    return reply


def agent(kind: str, db: Path):
    """A factory ``make_agent(tools)`` for evaluate_in_place (the tutorial's graph, ``kind``'s
    policy)."""

    def make(tools: list[Any]) -> Any:
        return build(PolicyModel(policy=policy(kind)), tools)

    return make


__all__ = ["TASKS", "agent", "make_db", "make_tools"]
