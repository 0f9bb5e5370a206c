import asyncio
import re
from playwright.async_api import Playwright, async_playwright, expect


async def run(playwright: Playwright) -> None:
    browser = await playwright.chromium.launch(headless=False)
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto("http://127.0.0.1:8000/login")
    await page.get_by_label("Username").click()
    await page.get_by_label("Username").fill("demo")
    await page.get_by_label("Password").click()
    await page.get_by_label("Password").fill("demo-password")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url("http://127.0.0.1:8000/account")
    await expect(page.get_by_text("Signed in as demo")).to_be_visible()
    await page.goto("http://127.0.0.1:8000/form")
    await page.get_by_label("Name").fill("Ada Lovelace")
    await page.get_by_role("textbox", name="Email").fill("ada@example.com")
    await page.get_by_label("Message").fill("Hello from the recorder")
    await page.get_by_label("Topic").select_option("billing")
    await page.get_by_label("Subscribe to newsletter").check()
    await page.get_by_label("Agree to terms").check()
    await page.get_by_label("Agree to terms").uncheck()
    await page.get_by_label("High").check()
    await page.get_by_label("Attachment").set_input_files("notes.txt")
    await expect(page.get_by_label("Name")).to_have_value("Ada Lovelace")
    await page.mouse.wheel(0, 200)
    await page.get_by_role("button", name="Send").click()
    await expect(page).to_have_url("http://127.0.0.1:8000/form/thanks?id=1")
    await expect(page.get_by_role("paragraph")).to_contain_text("received from Ada Lovelace")
    await expect(page).to_have_title("Thank you")

    # ---------------------
    await context.close()
    await browser.close()


async def main() -> None:
    async with async_playwright() as playwright:
        await run(playwright)


asyncio.run(main())
