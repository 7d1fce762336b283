"""Parsers for what MQ administrators can export: runmqsc text, MQ REST JSON, transmission queue
browses (amqsbcg, dmpmqmsg), amqsmon accounting and the project's message put records.

Every parser returns what it could read *and* a problem for everything it could not, with the file and
line; nothing is dropped silently.
"""

from clwl.parse.common import InputError, MqscRecord, ParsedCapture, ParseProblem

__all__ = ["InputError", "MqscRecord", "ParsedCapture", "ParseProblem"]
