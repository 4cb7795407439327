"""A tool whose return type is a pydantic model: `MCPServer` derives an `outputSchema` from it and
returns matching `structuredContent` (plus the same data as text). Correct structured output: the
guard must pass it."""

from typing import Literal

from pydantic import BaseModel

from mcp.server import MCPServer

mcp = MCPServer("py-output-schema", version="1.0.0")


class Weather(BaseModel):
    city: str
    temperature_c: float
    conditions: Literal["sunny", "cloudy", "rain"]


@mcp.tool()
def get_weather(city: str) -> Weather:
    """Current weather for a city."""
    return Weather(city=city, temperature_c=21.5, conditions="sunny")


if __name__ == "__main__":
    mcp.run()
